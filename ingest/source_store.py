"""Ingest source definitions in the catalog (opaque JSON; the source type gives it meaning),
with the positions (Kafka) and file records (file-drop) each source keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from kyma.engine.catalog import CatalogDatabase, Migrations, Store, check_identifier
from kyma.engine.errors import AlreadyExistsError, NotFoundError
from kyma.ingest.filedrop.files import FileStore
from kyma.ingest.kafka.positions import PositionStore

MIGRATIONS = Migrations("kyma.ingest")

_COLUMNS = "source_id, name, type, table_name, definition, created_at"


@dataclass(frozen=True)
class SourceRecord:
    source_id: int
    name: str
    type: str
    table_name: str
    definition: dict[str, Any]
    created_at: datetime


def create(
    conn: psycopg.Connection, name: str, type_: str, table: str, definition: dict[str, Any]
) -> SourceRecord:
    try:
        row = conn.execute(
            "INSERT INTO kyma.sources (name, type, table_name, definition)"
            f" VALUES (%s, %s, %s, %s) RETURNING {_COLUMNS}",
            (name, type_, table, Jsonb(definition)),
        ).fetchone()
    except psycopg.errors.UniqueViolation:
        raise AlreadyExistsError(f"source {name!r} already exists") from None
    return SourceRecord(*row)  # type: ignore[misc]


def get(conn: psycopg.Connection, name: str) -> SourceRecord:
    row = conn.execute(f"SELECT {_COLUMNS} FROM kyma.sources WHERE name = %s", (name,)).fetchone()
    if row is None:
        raise NotFoundError(f"source {name!r} does not exist")
    return SourceRecord(*row)


def list_all(conn: psycopg.Connection) -> list[SourceRecord]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM kyma.sources ORDER BY name").fetchall()
    return [SourceRecord(*row) for row in rows]


class SourceStore(Store):
    """Source definitions (``kyma.sources``); ``positions`` and ``files`` hold what each
    source has read."""

    migrations = (MIGRATIONS,)

    def __init__(self, db: CatalogDatabase) -> None:
        self.positions = PositionStore(db)
        self.files = FileStore(db)
        super().__init__(db)

    def create(self, name: str, type_: str, table: str, definition: dict[str, Any]) -> SourceRecord:
        check_identifier("source", name)
        with self.db.connection() as conn:
            return create(conn, name, type_, table, definition)

    def get(self, name: str) -> SourceRecord:
        with self.db.connection() as conn:
            return get(conn, name)

    def list_all(self) -> list[SourceRecord]:
        with self.db.connection() as conn:
            return list_all(conn)

    def drop(self, name: str) -> None:
        """The definition, its positions and file records go together; the table stays."""
        with self.db.transaction() as conn:
            if conn.execute("DELETE FROM kyma.sources WHERE name = %s", (name,)).rowcount == 0:
                raise NotFoundError(f"source {name!r} does not exist")
            self.positions.forget(conn, name)
            self.files.forget(conn, name)
