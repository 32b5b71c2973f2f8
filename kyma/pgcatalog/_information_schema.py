"""``information_schema``'s tables, views, columns and schemata over kyma's tables and views
(and its
table_constraints and key_column_usage, empty: kyma has no keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import ViewInfo
from kyma.pgcatalog._relations import Relation, nullable, plain_views
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


def _listed(infos: list[Relation]) -> list[Relation]:
    """Tables and views; Postgres's information_schema lists no materialized view."""
    return [i for i in infos if not (isinstance(i, ViewInfo) and i.materialized)]


def tables(infos: list[Relation]) -> pa.Table:
    infos = _listed(infos)
    names = [info.name for info in infos]
    return pa.table(
        {
            "table_catalog": [DATABASE] * len(names),
            "table_schema": [SCHEMA] * len(names),
            "table_name": names,
            "table_type": ["VIEW" if isinstance(i, ViewInfo) else "BASE TABLE" for i in infos],
        },
        schema=pa.schema([(n, pa.string()) for n in _TABLE_COLUMNS]),
    )


_TABLE_COLUMNS = ("table_catalog", "table_schema", "table_name", "table_type")


def views(infos: list[Relation]) -> pa.Table:
    """kyma's views are read-only: none is updatable or insertable into."""
    found = plain_views(infos)
    no = ["NO"] * len(found)
    return pa.table(
        {
            "table_catalog": [DATABASE] * len(found),
            "table_schema": [SCHEMA] * len(found),
            "table_name": [v.name for v in found],
            "view_definition": [v.query for v in found],
            "check_option": ["NONE"] * len(found),
            "is_updatable": no,
            "is_insertable_into": no,
            "is_trigger_updatable": no,
            "is_trigger_deletable": no,
            "is_trigger_insertable_into": no,
        },
        schema=pa.schema([(n, pa.string()) for n in _VIEW_COLUMNS]),
    )


_VIEW_COLUMNS = (
    "table_catalog",
    "table_schema",
    "table_name",
    "view_definition",
    "check_option",
    "is_updatable",
    "is_insertable_into",
    "is_trigger_updatable",
    "is_trigger_deletable",
    "is_trigger_insertable_into",
)


def columns(infos: list[Relation]) -> pa.Table:
    rows: dict[str, list] = {n: [] for n in _COLUMN_TYPES}  # type: ignore[type-arg]
    for info in _listed(infos):
        may_be_null = nullable(info)
        for position, field in enumerate(info.schema, start=1):
            oid = t.type_oid(field)
            element = _ELEMENT.get(oid)
            data_type, udt = (
                ("ARRAY", "_" + _NAMES[element][1]) if element else _NAMES.get(oid, _NAMES[t.TEXT])
            )
            values: tuple[Any, ...] = (DATABASE, SCHEMA, info.name, field.name, position)
            values += ("YES" if may_be_null.get(field.name, True) else "NO", data_type, udt)
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


def schemata(_infos: list[Relation]) -> pa.Table:
    names = [SCHEMA, "information_schema"]
    return pa.table(
        {"catalog_name": [DATABASE] * 2, "schema_name": names, "schema_owner": ["kyma"] * 2}
    )


def _constraints(_infos: list[Relation]) -> pa.Table:
    """table_constraints and key_column_usage: kyma has no keys, so no rows."""
    names = ("constraint_name", "table_schema", "table_name", "constraint_type", "column_name")
    return pa.schema([(n, pa.string()) for n in names]).empty_table()


VIEWS: dict[str, Callable[[list[Relation]], pa.Table]] = {
    "tables": tables,
    "views": views,
    "columns": columns,
    "schemata": schemata,
    "table_constraints": _constraints,
    "key_column_usage": _constraints,
}
