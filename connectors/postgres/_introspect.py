"""Read a source's tables and column types from pg_catalog (domains unwrapped)."""

from __future__ import annotations

import psycopg

from kyma.connectors.base import SourceColumn, SourceTable
from kyma.connectors.postgres._types import PgType, kyma_type
from kyma.connectors.spec import Scope
from kyma.engine.types import Column

_COLUMNS = """
SELECT n.nspname, c.relname, a.attname,
       format_type(bt.oid, CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END),
       bt.typname, bt.typcategory,
       CASE WHEN bt.typname = 'numeric' AND (CASE WHEN t.typtype = 'd' THEN t.typtypmod
                                                  ELSE a.atttypmod END) >= 4
            THEN (((CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END) - 4) >> 16)
                 & 65535 END,
       CASE WHEN a.attcollation = 0 THEN NULL
            WHEN coll.collname = 'default' THEN
                 CASE WHEN d.datlocprovider = 'i' THEN d.daticulocale ELSE d.datcollate END
            WHEN coll.collprovider = 'i' THEN coll.colliculocale
            ELSE coll.collcollate END
FROM pg_class c
JOIN pg_database d ON d.datname = current_database()
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_collation coll ON coll.oid = a.attcollation
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname, a.attnum
"""


def introspect(
    conn: psycopg.Connection, scope: Scope, *, numeric_mode: str
) -> tuple[list[SourceTable], list[str]]:
    """The tables in scope the connecting user may read, and warnings for unmapped types."""
    tables: dict[tuple[str, str], list[SourceColumn]] = {}
    warnings = []
    for schema, table, column, type_name, typname, category, precision, collation in conn.execute(
        _COLUMNS
    ):
        if not scope.admits(schema, table):
            continue
        pg_type = PgType(type_name, typname, category, precision, collation)
        kyma, warning = kyma_type(
            pg_type, numeric_mode=numeric_mode, geometry_mode=scope.geometry_mode
        )
        if warning:
            warnings.append(f"{schema}.{table}.{column}: {warning}")
        tables.setdefault((schema, table), []).append(SourceColumn(Column(column, kyma), pg_type))
    return [SourceTable(s, t, tuple(cols)) for (s, t), cols in tables.items()], warnings
