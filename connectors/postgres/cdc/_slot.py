"""The source side of a sync connector: its replication slot and publication.

The slot is created over a replication connection so that it exports a snapshot; while the
worker streams, ``where`` reads the slot's health and position with the server's WAL end in
one query; ``drop`` removes slot and publication when the connector goes (a slot left behind
holds WAL on the source forever).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from kyma.connectors.base import SyncDisabled
from kyma.connectors.cdc_state import lsn_int, lsn_text
from kyma.connectors.postgres.cdc._tables import SLOT_INVALIDATED, SLOT_MISSING

HEARTBEAT_PREFIX = "kyma_heartbeat"
PEEK = (
    "SELECT string_agg(int4send(octet_length(data)), ''::bytea), string_agg(data, ''::bytea)"
    " FROM pg_logical_slot_peek_binary_changes(%s, %s::pg_lsn, %s,"
    " 'proto_version', '1', 'publication_names', %s)"
)
"""The slot's pending messages (without consuming them), aggregated at the source into two
values: each message's length (4 bytes, big-endian) and the messages back to back. One
bytea each instead of a row per message: the client builds no object per message."""


@dataclass
class ExportedSlot:
    """A slot just created, its consistent point, and the snapshot its session exports."""

    connection: psycopg.Connection
    slot: str
    consistent_lsn: int
    snapshot_name: str

    def close(self) -> None:
        self.connection.close()


@dataclass(frozen=True)
class SlotPosition:
    wal_end: int  # pg_current_wal_flush_lsn(): every commit up to it is flushed, so decodable
    # (the write position can run ahead of the flush; a peek reads only flushed WAL, so a
    # commit between the two would wait, unread, for the WAL to move again)
    confirmed: int  # the slot's confirmed_flush_lsn


def create_slot(params: dict[str, Any], slot: str, *, temporary: bool) -> ExportedSlot:
    """``CREATE_REPLICATION_SLOT … LOGICAL pgoutput (SNAPSHOT 'export')`` (Postgres 15's
    syntax) on a ``replication=database`` connection, which the caller keeps open until every
    reader has imported the snapshot (it lives only as long as that session)."""
    conn = psycopg.connect(**params, replication="database", autocommit=True)
    try:
        kind = "TEMPORARY LOGICAL" if temporary else "LOGICAL"
        row = conn.execute(
            f"CREATE_REPLICATION_SLOT {slot} {kind} pgoutput (SNAPSHOT 'export')"
        ).fetchone()
    except BaseException:
        conn.close()
        raise
    assert row is not None
    return ExportedSlot(conn, slot, lsn_int(row[1]), row[2])


def where(conn: psycopg.Connection, slot: str) -> SlotPosition:
    """The server's WAL end and the slot's confirmed position; SyncDisabled if the slot is
    gone (``replication_slot_missing``) or invalidated by ``max_slot_wal_keep_size``."""
    row = conn.execute(
        "SELECT pg_current_wal_flush_lsn()::text, confirmed_flush_lsn::text, wal_status"
        " FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    ).fetchone()
    if row is None:
        raise SyncDisabled(SLOT_MISSING, slot)
    wal_end, confirmed, wal_status = row
    if wal_status == "lost" or confirmed is None:
        raise SyncDisabled(
            SLOT_INVALIDATED,
            f"{slot}: wal_status is {wal_status!r}; the source removed WAL the slot still"
            " needed (max_slot_wal_keep_size)",
        )
    return SlotPosition(lsn_int(wal_end), lsn_int(confirmed))


def peek(
    conn: psycopg.Connection, slot: str, upto_lsn: int, limit: int
) -> tuple[bytes, np.ndarray]:
    """The messages of up to ``limit`` changes committed at or before ``upto_lsn``, for the
    publication named as the slot: (the messages back to back, each one's length)."""
    row = conn.cursor(binary=True).execute(PEEK, (slot, lsn_text(upto_lsn), limit, slot))
    lengths, data = row.fetchone() or (None, None)
    if lengths is None:
        return b"", np.zeros(0, np.int64)
    return bytes(data), np.frombuffer(lengths, ">i4").astype(np.int64)


def exists(conn: psycopg.Connection, slot: str) -> bool:
    found = conn.execute("SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,))
    return found.fetchone() is not None


def heartbeat(conn: psycopg.Connection) -> None:
    """A tiny non-transactional WAL message in the source database, so that decoding (and
    the slot's restart point) moves on while nothing there commits."""
    conn.execute("SELECT pg_logical_emit_message(false, %s, '')", (HEARTBEAT_PREFIX,))


def release(params: dict[str, Any], slot: str, *, publication: bool) -> bool:
    """Drop the slot, if it is there (and the publication of the same name); whether a
    slot was dropped. A re-enabled connector drops an invalidated slot to make a new one."""
    with psycopg.connect(**params, autocommit=True) as conn:
        found = exists(conn, slot)
        if found:
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        if publication:
            conn.execute(sql.SQL("DROP PUBLICATION IF EXISTS {}").format(sql.Identifier(slot)))
    return found
