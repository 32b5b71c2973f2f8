"""API tokens in the catalog database: their SHA-256, scopes and table grants, never the
token."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg

from kyma.engine.catalog import Migrations, Store
from kyma.engine.errors import NotFoundError

MIGRATIONS = Migrations("kyma")

_COLUMNS = "token_id, name, scopes, tables, created_at, revoked_at"


@dataclass(frozen=True)
class TokenRecord:
    token_id: int
    name: str | None
    scopes: list[str]
    tables: list[str] | None  # None: every table
    created_at: datetime
    revoked_at: datetime | None


def create(
    conn: psycopg.Connection,
    sha256: bytes,
    scopes: list[str],
    tables: list[str] | None,
    name: str | None,
) -> TokenRecord:
    row = conn.execute(
        "INSERT INTO kyma.api_tokens (token_sha256, scopes, tables, name)"
        f" VALUES (%s, %s, %s, %s) RETURNING {_COLUMNS}",
        (sha256, scopes, tables, name),
    ).fetchone()
    return TokenRecord(*row)  # type: ignore[misc]


def by_hash(conn: psycopg.Connection, sha256: bytes) -> TokenRecord | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM kyma.api_tokens WHERE token_sha256 = %s", (sha256,)
    ).fetchone()
    return None if row is None else TokenRecord(*row)


def list_all(conn: psycopg.Connection) -> list[TokenRecord]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM kyma.api_tokens ORDER BY token_id").fetchall()
    return [TokenRecord(*row) for row in rows]


def revoke(conn: psycopg.Connection, token_id: int) -> TokenRecord:
    """Mark the token revoked (a second revoke keeps the first time)."""
    row = conn.execute(
        "UPDATE kyma.api_tokens SET revoked_at = coalesce(revoked_at, now())"
        f" WHERE token_id = %s RETURNING {_COLUMNS}",
        (token_id,),
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no token with id {token_id}")
    return TokenRecord(*row)


class TokenStore(Store):
    """API tokens (``kyma.api_tokens``) on the shared catalog database."""

    migrations = (MIGRATIONS,)

    def create(
        self, sha256: bytes, scopes: list[str], tables: list[str] | None, name: str | None
    ) -> TokenRecord:
        with self.db.connection() as conn:
            return create(conn, sha256, scopes, tables, name)

    def by_hash(self, sha256: bytes) -> TokenRecord | None:
        with self.db.connection() as conn:
            return by_hash(conn, sha256)

    def list_all(self) -> list[TokenRecord]:
        with self.db.connection() as conn:
            return list_all(conn)

    def revoke(self, token_id: int) -> TokenRecord:
        with self.db.connection() as conn:
            return revoke(conn, token_id)
