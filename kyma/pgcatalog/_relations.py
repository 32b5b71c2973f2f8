"""A small ``pg_catalog``: pg_namespace, pg_class, pg_attribute, pg_type, pg_database,
pg_settings, pg_am, pg_attrdef, pg_collation, pg_tablespace, pg_description, pg_roles,
pg_tables and pg_views over kyma's tables and views (the
functions are in ``_functions``, the relations kyma keeps empty in ``_empty``). Enough for
listing tables and columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import TableInfo, ViewInfo
from kyma.pgwire import _types as t

PUBLIC_OID, CATALOG_OID, INFORMATION_SCHEMA_OID = 2200, 11, 13000
DATABASE_OWNER_OID = 6171  # pg_database_owner, which owns the public schema (Postgres 15)
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
_ELEMENT = {array: element for element, array in t.ARRAY_OF.items()}
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


def formatted_type(typname: str) -> str:
    """format_type's name: ``bigint``, ``real[]``.

    >>> formatted_type("int8"), formatted_type("_float4"), formatted_type("jsonb")
    ('bigint', 'real[]', 'jsonb')
    """
    if typname.startswith("_"):
        return formatted_type(typname[1:]) + "[]"
    return FORMATTED.get(typname, typname)


Relation = TableInfo | ViewInfo
"""What the relations list: kyma's tables and views (their ids share one sequence)."""


def _oid(info: Relation) -> int:
    return TABLE_OID_BASE + (info.table_id if isinstance(info, TableInfo) else info.view_id)


def nullable(info: Relation) -> dict[str, bool]:
    """Whether each column may be null (a view's columns may)."""
    return {c.name: c.nullable for c in info.columns} if isinstance(info, TableInfo) else {}


def pg_namespace(_tables: list[Relation]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([CATALOG_OID, PUBLIC_OID, INFORMATION_SCHEMA_OID], pa.int64()),
            "nspname": ["pg_catalog", "public", "information_schema"],
            "nspowner": pa.array([10, DATABASE_OWNER_OID, 10], pa.int64()),
            "nspacl": pa.nulls(3, pa.list_(pa.string())),
        }
    )


def _kind(info: Relation) -> str:
    """pg_class.relkind: ``r`` a table, ``v`` a view, ``m`` a materialized view."""
    if isinstance(info, TableInfo):
        return "r"
    return "m" if info.materialized else "v"


def plain_views(relations: list[Relation]) -> list[ViewInfo]:
    """The views that are not materialized (Postgres's pg_views and information_schema do
    not list those)."""
    return [v for v in relations if isinstance(v, ViewInfo) and not v.materialized]


def pg_class(tables: list[Relation]) -> pa.Table:
    count = len(tables)
    kinds = [_kind(i) for i in tables]
    views = [k == "v" for k in kinds]

    def zeros(dtype: pa.DataType) -> pa.Array:
        return pa.array([0] * count, dtype)

    def no(_: object = None) -> pa.Array:
        return pa.array([False] * count, pa.bool_())

    return pa.table(
        {
            "oid": pa.array([_oid(i) for i in tables], pa.int64()),
            "relname": pa.array([i.name for i in tables], pa.string()),
            "relnamespace": pa.array([PUBLIC_OID] * count, pa.int64()),
            "relkind": pa.array(kinds, pa.string()),
            "relowner": pa.array([10] * count, pa.int64()),
            "relam": pa.array([0 if v else 2 for v in views], pa.int64()),
            "relpersistence": pa.array(["p"] * count, pa.string()),
            "relhasindex": pa.array([False] * count, pa.bool_()),
            "relispartition": pa.array([False] * count, pa.bool_()),
            "reltuples": pa.array([-1.0] * count, pa.float32()),
            "relchecks": zeros(pa.int16()),
            "relhasrules": no(),
            "relhastriggers": no(),
            "relrowsecurity": no(),
            "relforcerowsecurity": no(),
            "reltablespace": zeros(pa.int64()),
            "reloftype": zeros(pa.int64()),
            "reltoastrelid": zeros(pa.int64()),
            "relreplident": pa.array(["d"] * count, pa.string()),
            "relnatts": pa.array([len(i.schema) for i in tables], pa.int16()),
            "relacl": pa.nulls(count, pa.list_(pa.string())),
            "reloptions": pa.nulls(count, pa.list_(pa.string())),
            "relpartbound": pa.nulls(count, pa.string()),
        }
    )


def pg_attribute(tables: list[Relation]) -> pa.Table:
    rows: dict[str, list] = {  # type: ignore[type-arg]
        "attrelid": [],
        "attname": [],
        "atttypid": [],
        "attnum": [],
        "attnotnull": [],
        "attisdropped": [],
        "atttypmod": [],
        "atthasdef": [],
        "attcollation": [],
        "attidentity": [],
        "attgenerated": [],
        "attlen": [],
        "attstorage": [],
        "attcompression": [],
        "attstattarget": [],
    }
    for info in tables:
        may_be_null = nullable(info)
        for number, field in enumerate(info.schema, start=1):
            oid = t.type_oid(field)
            values: tuple[Any, ...] = (_oid(info), field.name, oid, number)
            values += (not may_be_null.get(field.name, True), False, -1, False, 0, "", "")
            values += (t.SIZES.get(oid, -1), "p" if oid in t.SIZES else "x", "", -1)
            for name, value in zip(rows, values, strict=True):
                rows[name].append(value)
    types = [pa.int64(), pa.string(), pa.int64(), pa.int16(), pa.bool_(), pa.bool_(), pa.int32()]
    types += [pa.bool_(), pa.int64(), pa.string(), pa.string(), pa.int16()]
    types += [pa.string(), pa.string(), pa.int16()]
    schema = pa.schema(list(zip(rows, types, strict=True)))
    return pa.table(rows, schema=schema)


def pg_type(_tables: list[Relation]) -> pa.Table:
    oids = sorted(TYPE_NAMES)
    return pa.table(
        {
            "oid": pa.array(oids, pa.int64()),
            "typname": [TYPE_NAMES[o] for o in oids],
            "typnamespace": pa.array([CATALOG_OID] * len(oids), pa.int64()),
            "typlen": pa.array([t.SIZES.get(o, -1) for o in oids], pa.int16()),
            "typtype": ["b"] * len(oids),
            "typcollation": pa.array([0] * len(oids), pa.int64()),
            "typelem": pa.array([_ELEMENT.get(o, 0) for o in oids], pa.int64()),
            "typarray": pa.array([t.ARRAY_OF.get(o, 0) for o in oids], pa.int64()),
            "typnotnull": pa.array([False] * len(oids), pa.bool_()),
            "typbasetype": pa.array([0] * len(oids), pa.int64()),
            "typtypmod": pa.array([-1] * len(oids), pa.int32()),
            "typrelid": pa.array([0] * len(oids), pa.int64()),
            "typdelim": [","] * len(oids),
            "typcategory": ["A" if o in _ELEMENT else "U" for o in oids],
            "typinput": ["array_in" if o in _ELEMENT else TYPE_NAMES[o] + "in" for o in oids],
        }
    )


def pg_database(_tables: list[Relation]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([16384], pa.int64()),
            "datname": ["kyma"],
            "datdba": pa.array([10], pa.int64()),
            "encoding": pa.array([6], pa.int32()),  # UTF8
            "datcollate": ["C.UTF-8"],
            "datctype": ["C.UTF-8"],
            "daticulocale": pa.nulls(1, pa.string()),
            "datlocprovider": ["c"],
            "datistemplate": [False],
            "datallowconn": [True],
            "datacl": pa.nulls(1, pa.list_(pa.string())),
            "dattablespace": pa.array([1663], pa.int64()),
        }
    )


def pg_settings(_tables: list[Relation]) -> pa.Table:
    from kyma.pgwire._session import DEFAULTS

    names = sorted(DEFAULTS)
    return pa.table(
        {
            "name": names,
            "setting": [DEFAULTS[n] for n in names],
            "unit": pa.nulls(len(names), pa.string()),
            "category": ["kyma"] * len(names),
            "short_desc": [""] * len(names),
            "context": ["user"] * len(names),
            "vartype": ["string"] * len(names),
            "source": ["default"] * len(names),
        }
    )


def _empty(**columns: pa.DataType) -> Callable[[list[Relation]], pa.Table]:
    """A relation kyma keeps empty but clients join (LEFT JOIN, scalar subqueries)."""
    return lambda _tables: pa.schema(list(columns.items())).empty_table()


pg_attrdef = _empty(oid=pa.int64(), adrelid=pa.int64(), adnum=pa.int16(), adbin=pa.string())
pg_description = _empty(
    objoid=pa.int64(), classoid=pa.int64(), objsubid=pa.int32(), description=pa.string()
)

pg_stat_user_tables = _empty(
    relid=pa.int64(), schemaname=pa.string(), relname=pa.string(), n_live_tup=pa.int64()
)


def pg_collation(_tables: list[Relation]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([100], pa.int64()),
            "collname": ["default"],
            "collnamespace": pa.array([CATALOG_OID], pa.int64()),
            "collprovider": ["d"],
        }
    )


def pg_tablespace(_tables: list[Relation]) -> pa.Table:
    return pa.table(
        {
            "oid": pa.array([1663, 1664], pa.int64()),
            "spcname": ["pg_default", "pg_global"],
            "spcowner": pa.array([10, 10], pa.int64()),
            "spcacl": pa.nulls(2, pa.list_(pa.string())),
            "spcoptions": pa.nulls(2, pa.list_(pa.string())),
        }
    )


def pg_am(_tables: list[Relation]) -> pa.Table:
    return pa.table({"oid": pa.array([2], pa.int64()), "amname": ["heap"]})


def pg_tables(relations: list[Relation]) -> pa.Table:
    names = [t.name for t in relations if isinstance(t, TableInfo)]
    count = len(names)
    return pa.table(
        {
            "schemaname": pa.array(["public"] * count, pa.string()),
            "tablename": pa.array(names, pa.string()),
            "tableowner": pa.array([OWNER] * count, pa.string()),
            "tablespace": pa.nulls(count, pa.string()),
            "hasindexes": pa.array([False] * count, pa.bool_()),
            "hasrules": pa.array([False] * count, pa.bool_()),
            "hastriggers": pa.array([False] * count, pa.bool_()),
            "rowsecurity": pa.array([False] * count, pa.bool_()),
        }
    )


def pg_roles(_tables: list[Relation]) -> pa.Table:
    """The one role every caller is (its token decides what it may do)."""
    yes, no = pa.array([True]), pa.array([False])
    return pa.table(
        {
            "oid": pa.array([10], pa.int64()),
            "rolname": [OWNER],
            "rolsuper": no,
            "rolinherit": yes,
            "rolcreaterole": no,
            "rolcreatedb": no,
            "rolcanlogin": yes,
            "rolreplication": no,
            "rolconnlimit": pa.array([-1], pa.int32()),
            "rolvaliduntil": pa.nulls(1, pa.timestamp("us", "UTC")),
            "rolbypassrls": no,
            "rolconfig": pa.nulls(1, pa.list_(pa.string())),
        }
    )


def pg_views(relations: list[Relation]) -> pa.Table:
    views = plain_views(relations)
    return pa.table(
        {
            "schemaname": pa.array(["public"] * len(views), pa.string()),
            "viewname": pa.array([v.name for v in views], pa.string()),
            "viewowner": pa.array([OWNER] * len(views), pa.string()),
            "definition": pa.array([v.query for v in views], pa.string()),
        }
    )


def pg_matviews(relations: list[Relation]) -> pa.Table:
    found = [v for v in relations if isinstance(v, ViewInfo) and v.materialized]
    count = len(found)
    return pa.table(
        {
            "schemaname": pa.array(["public"] * count, pa.string()),
            "matviewname": pa.array([v.name for v in found], pa.string()),
            "matviewowner": pa.array([OWNER] * count, pa.string()),
            "tablespace": pa.nulls(count, pa.string()),
            "hasindexes": pa.array([False] * count, pa.bool_()),
            "ispopulated": pa.array([True] * count, pa.bool_()),
            "definition": pa.array([v.definition for v in found], pa.string()),
        }
    )


RELATIONS: dict[str, Callable[[list[Relation]], pa.Table]] = {
    "pg_views": pg_views,
    "pg_matviews": pg_matviews,
    "pg_tables": pg_tables,
    "pg_roles": pg_roles,
    "pg_namespace": pg_namespace,
    "pg_class": pg_class,
    "pg_attribute": pg_attribute,
    "pg_type": pg_type,
    "pg_database": pg_database,
    "pg_am": pg_am,
    "pg_settings": pg_settings,
    "pg_attrdef": pg_attrdef,
    "pg_collation": pg_collation,
    "pg_tablespace": pg_tablespace,
    "pg_description": pg_description,
    "pg_stat_user_tables": pg_stat_user_tables,
}
