"""The ingest ledger: idempotency keys, each recorded in the same transaction as its commit.

A request holding a key takes a session advisory lock on it first, so two requests with
one key never ingest twice: the second waits for the first, then replays its answer.
``kyma.ingest_ledger`` is created by the engine catalog's first migration (``sql/001``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from kyma.engine.catalog import ENGINE_MIGRATIONS, Payload, Store, Transaction
from kyma.engine.errors import IdempotencyInFlightError

LEDGER_TTL = timedelta(hours=24)
LEDGER_RETENTION = timedelta(hours=25)
_LOCK_SPACE = 0x6C656467  # "ledg": keeps these advisory locks apart from others


@dataclass(frozen=True)
class LedgerEntry:
    key: str
    table_name: str
    body_hash: str | None
    ack: dict[str, Any]
    created_at: datetime


@contextmanager
def key_lock(conn: psycopg.Connection, key: str, wait_seconds: float) -> Iterator[None]:
    """Hold the advisory lock of ``key`` on ``conn``; IdempotencyInFlightError on timeout."""
    # At least 1 ms: a lock_timeout of 0 would mean "wait forever".
    conn.execute(f"SET lock_timeout = '{max(1, int(wait_seconds * 1000))}ms'")
    try:
        conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_LOCK_SPACE, key))
    except psycopg.errors.LockNotAvailable:
        raise IdempotencyInFlightError(
            f"a request with idempotency key {key!r} is still in flight; retry later"
        ) from None
    finally:
        conn.execute("RESET lock_timeout")
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_SPACE, key))


def lookup(conn: psycopg.Connection, key: str, ttl: timedelta = LEDGER_TTL) -> LedgerEntry | None:
    """The live ledger entry of ``key``; entries older than ``ttl`` count as absent."""
    row = conn.execute(
        "SELECT key, table_name, body_hash, ack, created_at FROM kyma.ingest_ledger"
        " WHERE key = %s AND created_at >= now() - %s",
        (key, ttl),
    ).fetchone()
    return None if row is None else LedgerEntry(*row)


def record(
    key: str,
    table: str,
    body_hash: str | None,
    ack: Callable[[int], dict[str, Any]],
    ttl: timedelta = LEDGER_TTL,
) -> Payload:
    """A commit payload that records ``key`` (replacing an expired entry of the same key)."""

    def payload(cur: Transaction, snapshot_id: int) -> None:
        cur.execute(
            "INSERT INTO kyma.ingest_ledger AS l (key, table_name, body_hash, ack)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE"
            " SET table_name = excluded.table_name, body_hash = excluded.body_hash,"
            " ack = excluded.ack, created_at = now() WHERE l.created_at < now() - %s",
            (key, table, body_hash, Jsonb(ack(snapshot_id)), ttl),
        )
        if cur.rowcount != 1:
            raise IdempotencyInFlightError(f"idempotency key {key!r} was recorded meanwhile")

    return payload


class Ledger(Store):
    """The idempotency keys on the shared catalog database."""

    migrations = (ENGINE_MIGRATIONS,)  # kyma.ingest_ledger is in sql/001

    @contextmanager
    def lock(self, key: str, wait_seconds: float = 30.0) -> Iterator[None]:
        """Hold ``key``'s lock for a request; a second holder waits, then gets 409-style."""
        with self.db.connection() as conn, key_lock(conn, key, wait_seconds):
            yield

    def lookup(self, key: str) -> LedgerEntry | None:
        with self.db.connection() as conn:
            return lookup(conn, key)

    def sweep(self, older_than: timedelta = LEDGER_RETENTION) -> int:
        """Delete idempotency records older than ``older_than``; return how many."""
        with self.db.connection() as conn:
            cur = conn.execute(
                "DELETE FROM kyma.ingest_ledger WHERE created_at < now() - %s", (older_than,)
            )
        return cur.rowcount
