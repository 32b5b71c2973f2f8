"""A small ``pg_catalog``: pg_namespace, pg_class, pg_attribute, pg_type, pg_database and
pg_am over kyma's tables, plus the functions psql's ``\\dt`` and schema browsers call
(pg_get_userbyid, pg_table_is_visible, format_type). Enough for listing tables and columns;
no indexes, constraints or dependencies (kyma has none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import datafusion
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.catalog import TableInfo
from kyma.pgwire import _types as t

PUBLIC_OID, CATALOG_OID, INFORMATION_SCHEMA_OID = 2200, 11, 13000
TABLE_OID_BASE = 16384  # Postgres' first user OID; a table's OID is this plus its id
OWNER = "kyma"
# type OID → typname
TYPE_NAMES = {
    t.BOOL: "bool",
    t.BYTEA: "bytea",
    t.INT8: "int8",
    t.INT2: "int2",
    t.INT4: "int4",
    t.TEXT: "text",
    t.JSON: "json",
    t.FLOAT4: "float4",
    t.FLOAT8: "float8",
    t.DATE: "date",
    t.TIME: "time",
    t.TIMESTAMP: "timestamp",
    t.TIMESTAMPTZ: "timestamptz",
    t.INTERVAL: "interval",
    t.NUMERIC: "numeric",
    t.JSONB: "jsonb",
}
TYPE_NAMES.update({array: "_" + TYPE_NAMES[element] for element, array in t.ARRAY_OF.items()})
# format_type's rendering, where it differs from typname
FORMATTED = {
    "bool": "boolean",
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "time": "time without time zone",
}


def _formatted(typname: str) -> str:
    """format_type's name: ``bigint``, ``real[]``.

    >>> _formatted("int8"), _formatted("_float4"), _formatted("jsonb")
    ('bigint', 'real[]', 'jsonb')
    """
    if typname.startswith("_"):
        return _formatted(typname[1:]) + "[]"
    return FORMATTED.get(typname, typname)


def _oid(info: TableInfo) -> int:
    return TABLE_OID_BASE + info.table_id


def pg_namespace(_tables: list[TableInfo]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([CATALOG_OID, PUBLIC_OID, INFORMATION_SCHEMA_OID], pa.int64()),
            "nspname": ["pg_catalog", "public", "information_schema"],
            "nspowner": pa.array([10, 10, 10], pa.int64()),
        }
    )


def pg_class(tables: list[TableInfo]) -> pa.Table:
    count = len(tables)
    return pa.table(
        {
            "oid": pa.array([_oid(i) for i in tables], pa.int64()),
            "relname": pa.array([i.name for i in tables], pa.string()),
            "relnamespace": pa.array([PUBLIC_OID] * count, pa.int64()),
            "relkind": pa.array(["r"] * count, pa.string()),
            "relowner": pa.array([10] * count, pa.int64()),
            "relam": pa.array([2] * count, pa.int64()),
            "relpersistence": pa.array(["p"] * count, pa.string()),
            "relhasindex": pa.array([False] * count, pa.bool_()),
            "relispartition": pa.array([False] * count, pa.bool_()),
            "reltuples": pa.array([-1.0] * count, pa.float32()),
        }
    )


def pg_attribute(tables: list[TableInfo]) -> pa.Table:
    rows: dict[str, list] = {  # type: ignore[type-arg]
        "attrelid": [],
        "attname": [],
        "atttypid": [],
        "attnum": [],
        "attnotnull": [],
        "attisdropped": [],
        "atttypmod": [],
    }
    for info in tables:
        nullable = {c.name: c.nullable for c in info.columns}
        for number, field in enumerate(info.schema, start=1):
            values: tuple[Any, ...] = (_oid(info), field.name, t.type_oid(field), number)
            values += (not nullable.get(field.name, True), False, -1)
            for name, value in zip(rows, values, strict=True):
                rows[name].append(value)
    types = [pa.int64(), pa.string(), pa.int64(), pa.int16(), pa.bool_(), pa.bool_(), pa.int32()]
    schema = pa.schema(list(zip(rows, types, strict=True)))
    return pa.table(rows, schema=schema)


def pg_type(_tables: list[TableInfo]) -> pa.Table:
    oids = sorted(TYPE_NAMES)
    return pa.table(
        {
            "oid": pa.array(oids, pa.int64()),
            "typname": [TYPE_NAMES[o] for o in oids],
            "typnamespace": pa.array([CATALOG_OID] * len(oids), pa.int64()),
            "typlen": pa.array([t.SIZES.get(o, -1) for o in oids], pa.int16()),
            "typtype": ["b"] * len(oids),
        }
    )


def pg_database(_tables: list[TableInfo]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([16384], pa.int64()),
            "datname": ["kyma"],
            "datdba": pa.array([10], pa.int64()),
        }
    )


def pg_am(_tables: list[TableInfo]) -> pa.Table:
    return pa.table({"oid": pa.array([2], pa.int64()), "amname": ["heap"]})


RELATIONS: dict[str, Callable[[list[TableInfo]], pa.Table]] = {
    "pg_namespace": pg_namespace,
    "pg_class": pg_class,
    "pg_attribute": pg_attribute,
    "pg_type": pg_type,
    "pg_database": pg_database,
    "pg_am": pg_am,
}


def register_functions(context: datafusion.SessionContext) -> None:
    """The pg_catalog functions clients call, as DataFusion UDFs."""

    def userbyid(oids: pa.Array) -> pa.Array:
        return pa.array([OWNER] * len(oids), pa.string())

    def visible(oids: pa.Array) -> pa.Array:
        return pa.array([True] * len(oids), pa.bool_())

    def format_type(oids: pa.Array, _mods: pa.Array) -> pa.Array:
        names = [TYPE_NAMES.get(o) for o in pc.cast(oids, pa.int64()).to_pylist()]
        return pa.array([_formatted(n) if n else None for n in names], pa.string())

    for fn, inputs, output in (
        (userbyid, [pa.int64()], pa.string()),
        (visible, [pa.int64()], pa.bool_()),
        (format_type, [pa.int64(), pa.int64()], pa.string()),
    ):
        name = {"userbyid": "pg_get_userbyid", "visible": "pg_table_is_visible"}.get(
            fn.__name__, fn.__name__
        )
        context.register_udf(datafusion.udf(fn, inputs, output, "stable", name))
