"""The synced tables: primary keys, kyma tables with system columns, the publication."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql

from kyma.connectors.base import SourceTable
from kyma.connectors.postgres._types import PgType, kyma_type
from kyma.engine.catalog import Catalog
from kyma.engine.errors import AlreadyExistsError, ConfigError
from kyma.engine.types import Column, KymaType

NO_PRIMARY_KEY = "table has no primary key - cannot CDC sync"
PK_CHANGED = "pk_changed"
SLOT_MISSING = "replication_slot_missing"
SLOT_INVALIDATED = "replication_slot_invalidated"
RESNAPSHOT_REASONS = (SLOT_MISSING, SLOT_INVALIDATED, PK_CHANGED)
"""Disabled for one of these, re-enabling the connector re-snapshots its tables."""
SYSTEM_COLUMNS = (
    Column("_kyma_pk", KymaType("string")),
    Column("_kyma_op", KymaType("string")),
    Column("_kyma_lsn", KymaType("string")),
    Column("_kyma_event_at", KymaType("timestamp")),
)
_PRIMARY_KEY = """
SELECT kcu.column_name
FROM information_schema.table_constraints tc
JOIN information_schema.key_column_usage kcu
  ON kcu.constraint_schema = tc.constraint_schema AND kcu.constraint_name = tc.constraint_name
 AND kcu.table_schema = tc.table_schema AND kcu.table_name = tc.table_name
WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = %s AND tc.table_name = %s
ORDER BY kcu.ordinal_position
"""
_TYPE = """
SELECT format_type(bt.oid, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE %(mod)s END),
       bt.typname, bt.typcategory, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE %(mod)s END
FROM pg_type t
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
WHERE t.oid = %(oid)s
"""


@dataclass(frozen=True)
class SyncOptions:
    """How a connector's ``sync`` section says snapshots run."""

    spark_min_bytes: int | None = 256 * 2**20
    """Tables this large (``pg_table_size``) snapshot on Spark; None: never."""
    chunk_bytes: int = 64 * 2**20
    """The pages one Spark task reads."""

    @classmethod
    def of(cls, sync: dict) -> SyncOptions:  # type: ignore[type-arg]
        default = cls()
        return cls(
            spark_min_bytes=sync.get("spark_min_bytes", default.spark_min_bytes),
            chunk_bytes=sync.get("chunk_bytes") or default.chunk_bytes,
        )


@dataclass(frozen=True)
class SyncTable:
    schema: str
    name: str
    kyma_table: str
    primary_key: tuple[str, ...]
    source: SourceTable

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


def slot_name(connector_id: int) -> str:
    return f"kyma_{connector_id}"


def sync_tables(spec_sync: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [tuple(entry.split(".", 1)) for entry in spec_sync.get("tables", [])]  # type: ignore[misc]


def primary_key(conn: psycopg.Connection, schema: str, table: str) -> tuple[str, ...]:
    return tuple(name for (name,) in conn.execute(_PRIMARY_KEY, (schema, table)))


def pg_type(conn: psycopg.Connection, oid: int, typmod: int) -> PgType:
    """The PgType of a column from a Relation message's type oid and modifier."""
    row = conn.execute(_TYPE, {"oid": oid, "mod": typmod}).fetchone()
    if row is None:
        return PgType(f"oid {oid}", "?", "U")
    name, typname, category, mod = row
    precision = ((mod - 4) >> 16) & 65535 if typname == "numeric" and mod >= 4 else None
    return PgType(name, typname, category, precision)


def kyma_columns(source: SourceTable) -> list[Column]:
    reserved = {c.name for c in SYSTEM_COLUMNS} | {"_timestamp", "props"}
    clash = [c.name for c in source.columns if c.name in reserved]
    if clash:
        raise ConfigError(
            f"table {source.schema}.{source.name}: column {clash[0]!r} clashes with a kyma"
            " system column"
        )
    return [c.column for c in source.columns]


def ensure_kyma_table(catalog: Catalog, table: SyncTable) -> None:
    """Create the kyma table (source columns, then the system columns), or widen it."""
    columns = [*kyma_columns(table.source), *SYSTEM_COLUMNS]
    try:
        catalog.create_table(table.kyma_table, columns, options={"cdc": "postgres"})
    except AlreadyExistsError:
        info = catalog.get_table(table.kyma_table)
        missing = [c for c in columns if info.column(c.name) is None]
        if missing:
            catalog.add_columns(table.kyma_table, missing)


def widen(
    catalog: Catalog, kyma_table: str, columns: dict[str, PgType], numeric_mode: str
) -> list[str]:
    """Add the columns a source DDL added (their kyma types from the source types); the
    warnings of those whose type kyma does not map (they read as dynamic)."""
    info = catalog.get_table(kyma_table)
    missing, warnings = [], []
    for name, pg in columns.items():
        if info.column(name) is None:
            kyma, warning = kyma_type(pg, numeric_mode=numeric_mode)
            missing.append(Column(name, kyma))
            if warning:
                warnings.append(f"{name}: {warning}")
    if missing:
        catalog.add_columns(kyma_table, missing, if_not_exists=True)
    return warnings


def ensure_publication(conn: psycopg.Connection, name: str, tables: list[SyncTable]) -> None:
    """``CREATE PUBLICATION name FOR TABLE …`` or, if it exists, set its tables."""
    idents = sql.SQL(", ").join(sql.Identifier(t.schema, t.name) for t in tables)
    exists = conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
    verb = "ALTER PUBLICATION {} SET TABLE {}" if exists else "CREATE PUBLICATION {} FOR TABLE {}"
    conn.execute(sql.SQL(verb).format(sql.Identifier(name), idents))
