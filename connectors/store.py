"""Connector definitions and their persistent state, in the catalog database.

The catalog stores a definition as an opaque JSON document; what it means belongs to
the connector. Secrets are never stored: definitions carry references to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from kyma.engine.catalog import Migrations, Store, check_identifier
from kyma.engine.errors import AlreadyExistsError, NotFoundError

MIGRATIONS = Migrations("kyma.connectors")

_COLUMNS = "connector_id, name, type, definition, created_at, disabled_reason, last_error"


@dataclass(frozen=True)
class ConnectorRecord:
    connector_id: int
    name: str
    type: str
    definition: dict[str, Any]
    created_at: datetime
    disabled_reason: str | None
    last_error: str | None


def create(
    conn: psycopg.Connection, name: str, type_: str, definition: dict[str, Any]
) -> ConnectorRecord:
    try:
        row = conn.execute(
            f"INSERT INTO kyma.connectors (name, type, definition) VALUES (%s, %s, %s)"
            f" RETURNING {_COLUMNS}",
            (name, type_, Jsonb(definition)),
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        raise AlreadyExistsError(f"connector {name!r} already exists") from None
    return ConnectorRecord(*row)  # type: ignore[misc]


def get(conn: psycopg.Connection, key: str) -> ConnectorRecord:
    """By name, or by id when ``key`` is all digits."""
    column = "connector_id" if key.isdigit() else "name"
    value: int | str = int(key) if key.isdigit() else key
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM kyma.connectors WHERE {column} = %s", (value,)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"connector {key!r} does not exist")
    return ConnectorRecord(*row)


def list_all(conn: psycopg.Connection) -> list[ConnectorRecord]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM kyma.connectors ORDER BY name").fetchall()
    return [ConnectorRecord(*row) for row in rows]


def update(
    conn: psycopg.Connection, connector_id: int, definition: dict[str, Any]
) -> ConnectorRecord:
    """A new definition; its state (disabled_reason, last_error) starts over."""
    row = conn.execute(
        "UPDATE kyma.connectors SET definition = %s, disabled_reason = NULL, last_error = NULL,"
        f" updated_at = now() WHERE connector_id = %s RETURNING {_COLUMNS}",
        (Jsonb(definition), connector_id),
    ).fetchone()
    if row is None:
        raise NotFoundError(f"connector {connector_id} does not exist")
    return ConnectorRecord(*row)


def drop(conn: psycopg.Connection, key: str) -> ConnectorRecord:
    record = get(conn, key)
    conn.execute("DELETE FROM kyma.connectors WHERE connector_id = %s", (record.connector_id,))
    return record


def set_state(
    conn: psycopg.Connection,
    connector_id: int,
    *,
    disabled_reason: str | None,
    last_error: str | None,
) -> None:
    conn.execute(
        "UPDATE kyma.connectors SET disabled_reason = %s, last_error = %s, updated_at = now()"
        " WHERE connector_id = %s",
        (disabled_reason, last_error, connector_id),
    )


class ConnectorStore(Store):
    """Connector records (``kyma.connectors``) on the shared catalog database."""

    migrations = (MIGRATIONS,)

    def create(self, name: str, type_: str, definition: dict[str, Any]) -> ConnectorRecord:
        check_identifier("connector", name)
        with self.db.connection() as conn:
            return create(conn, name, type_, definition)

    def get(self, key: str) -> ConnectorRecord:
        """A connector by name, or by id when ``key`` is all digits; NotFoundError if none."""
        with self.db.connection() as conn:
            return get(conn, key)

    def list_all(self) -> list[ConnectorRecord]:
        with self.db.connection() as conn:
            return list_all(conn)

    def update(self, connector_id: int, definition: dict[str, Any]) -> ConnectorRecord:
        with self.db.connection() as conn:
            return update(conn, connector_id, definition)

    def drop(self, key: str) -> ConnectorRecord:
        with self.db.connection() as conn:
            return drop(conn, key)

    def set_state(
        self, connector_id: int, *, disabled_reason: str | None, last_error: str | None
    ) -> None:
        with self.db.connection() as conn:
            set_state(conn, connector_id, disabled_reason=disabled_reason, last_error=last_error)
