"""``information_schema``'s tables, columns and schemata over kyma's tables (and its
table_constraints and key_column_usage, empty: kyma has no keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import TableInfo
from kyma.pgwire import _types as t

DATABASE, SCHEMA = "kyma", "public"
# type OID → (information_schema.columns.data_type, udt_name)
_NAMES = {
    t.BOOL: ("boolean", "bool"),
    t.INT2: ("smallint", "int2"),
    t.INT4: ("integer", "int4"),
    t.INT8: ("bigint", "int8"),
    t.FLOAT4: ("real", "float4"),
    t.FLOAT8: ("double precision", "float8"),
    t.TEXT: ("text", "text"),
    t.BYTEA: ("bytea", "bytea"),
    t.DATE: ("date", "date"),
    t.TIME: ("time without time zone", "time"),
    t.TIMESTAMP: ("timestamp without time zone", "timestamp"),
    t.TIMESTAMPTZ: ("timestamp with time zone", "timestamptz"),
    t.NUMERIC: ("numeric", "numeric"),
    t.JSONB: ("jsonb", "jsonb"),
}
_ELEMENT = {array: element for element, array in t.ARRAY_OF.items()}


def tables(infos: list[TableInfo]) -> pa.Table:
    names = [info.name for info in infos]
    return pa.table(
        {
            "table_catalog": [DATABASE] * len(names),
            "table_schema": [SCHEMA] * len(names),
            "table_name": names,
            "table_type": ["BASE TABLE"] * len(names),
        },
        schema=pa.schema([(n, pa.string()) for n in _TABLE_COLUMNS]),
    )


_TABLE_COLUMNS = ("table_catalog", "table_schema", "table_name", "table_type")


def columns(infos: list[TableInfo]) -> pa.Table:
    rows: dict[str, list] = {n: [] for n in _COLUMN_TYPES}  # type: ignore[type-arg]
    for info in infos:
        nullable = {c.name: c.nullable for c in info.columns}
        for position, field in enumerate(info.schema, start=1):
            oid = t.type_oid(field)
            element = _ELEMENT.get(oid)
            data_type, udt = (
                ("ARRAY", "_" + _NAMES[element][1]) if element else _NAMES.get(oid, _NAMES[t.TEXT])
            )
            values: tuple[Any, ...] = (DATABASE, SCHEMA, info.name, field.name, position)
            values += ("YES" if nullable.get(field.name, True) else "NO", data_type, udt)
            values += ("pg_catalog", None, "NO")
            for name, value in zip(_COLUMN_TYPES, values, strict=True):
                rows[name].append(value)
    return pa.table(rows, schema=pa.schema(list(_COLUMN_TYPES.items())))


_COLUMN_TYPES = {
    "table_catalog": pa.string(),
    "table_schema": pa.string(),
    "table_name": pa.string(),
    "column_name": pa.string(),
    "ordinal_position": pa.int32(),
    "is_nullable": pa.string(),
    "data_type": pa.string(),
    "udt_name": pa.string(),
    "udt_schema": pa.string(),
    "column_default": pa.string(),
    "is_identity": pa.string(),
}


def schemata(_infos: list[TableInfo]) -> pa.Table:
    names = [SCHEMA, "information_schema"]
    return pa.table(
        {"catalog_name": [DATABASE] * 2, "schema_name": names, "schema_owner": ["kyma"] * 2}
    )


def _constraints(_infos: list[TableInfo]) -> pa.Table:
    """table_constraints and key_column_usage: kyma has no keys, so no rows."""
    names = ("constraint_name", "table_schema", "table_name", "constraint_type", "column_name")
    return pa.schema([(n, pa.string()) for n in names]).empty_table()


VIEWS: dict[str, Callable[[list[TableInfo]], pa.Table]] = {
    "tables": tables,
    "columns": columns,
    "schemata": schemata,
    "table_constraints": _constraints,
    "key_column_usage": _constraints,
}
