"""``information_schema`` (tables, columns, schemata) and a small ``pg_catalog`` (see
``_pg_catalog``) over kyma's tables, for psql's ``\\dt`` and the schema browsers of clients.

A statement naming one of these relations runs in its own DataFusion context over Arrow tables
built from the catalog, holding only the tables the caller's token may read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import datafusion
import pyarrow as pa

from kyma.auth import Principal
from kyma.engine.catalog import Catalog
from kyma.engine.errors import EngineFailedError, SqlError
from kyma.engine.query import QueryResult, contained
from kyma.pgwire import _pg_catalog
from kyma.pgwire import _types as t

DATABASE, SCHEMA = "kyma", "public"
_STRING = re.compile(r"'(?:[^']|'')*'")
_VIEW = re.compile(r'"?information_schema"?\s*\.\s*"?(\w+)"?', re.I)
_PG_RELATION = re.compile(r"\b(" + "|".join(_pg_catalog.RELATIONS) + r")\b", re.I)
_EMPTY_RELATION = re.compile(r"\b(" + "|".join(_pg_catalog.EMPTY) + r")\b", re.I)
_REG_LITERAL = re.compile(r"'(?:pg_catalog\.)?(\w+)'\s*::\s*regclass\b", re.I)
_CATALOG_OIDS = {"pg_class": 1259, "pg_attribute": 1249, "pg_type": 1247, "pg_namespace": 2615}
# JDBC ranks types by their schema's place in the search path with a join over
# generate_series; every kyma type is in pg_catalog, so the join and its rank go
_SEARCH_PATH_JOIN = re.compile(
    r"LEFT\s+JOIN\s+\(\s*select\s+ns\.oid\s+as\s+nspoid.*?\)\s+as\s+sp\s+"
    r"ON\s+sp\.nspoid\s*=\s*typnamespace",
    re.I | re.S,
)
_SEARCH_PATH_RANK = re.compile(r"ORDER\s+BY\s+sp\.r\s*,", re.I)
_ARRAY_UPPER = re.compile(r"\barray_upper\s*\(", re.I)  # lower bounds are 1 here
_REG_CAST = re.compile(r"::\s*(?:regclass|regtype|regnamespace|regproc|regrole)\b", re.I)
# psql's \\d reads a column's default and collation in correlated scalar subqueries that
# DataFusion cannot plan; kyma has neither, so each such subquery is NULL
_SCALAR = re.compile(
    r"\(\s*SELECT\s+[^()]*?(?:\([^()]*\)[^()]*?)*FROM\s+(?:pg_attrdef|pg_collation)\b", re.I
)
_GET_EXPR = re.compile(r"\bpg_get_expr\s*\(([^,()]+),([^,()]+),\s*(?:true|false)\s*\)", re.I)
_PG_PREFIX = re.compile(r'"?pg_catalog"?\s*\.\s*', re.I)
_COLLATE = re.compile(r'\s+COLLATE\s+(?:"?pg_catalog"?\s*\.\s*)?"?default"?', re.I)
_OPERATOR = re.compile(r"OPERATOR\s*\(\s*pg_catalog\s*\.\s*([^\s)]+)\s*\)", re.I)
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


def answer(sql: str, catalog: Catalog, caller: Principal) -> QueryResult | None:
    """The result of a statement over ``information_schema`` or ``pg_catalog``'s relations,
    or None for any other statement."""
    code = _STRING.sub("''", sql)  # a name inside a string literal is no reference
    views = {m.group(1).lower() for m in _VIEW.finditer(code)}
    relations = {m.group(1).lower() for m in _PG_RELATION.finditer(code)}
    empty = _EMPTY_RELATION.search(code)
    if not views and not relations and not empty:
        return None
    caller.require("read")
    if empty:  # no indexes, constraints, policies… in kyma: no rows
        return QueryResult(pa.table({"?column?": pa.array([], pa.string())}), "OK")
    unknown = sorted(views - set(_BUILDERS))
    if unknown:
        raise SqlError(
            f"information_schema.{unknown[0]} is not available: kyma has "
            + ", ".join(f"information_schema.{v}" for v in _BUILDERS)
        )
    context = datafusion.SessionContext()
    _pg_catalog.register_functions(context)
    tables = [info for info in catalog.list_tables() if caller.may_touch(info.name)]
    builders = {f"information_schema_{v}": _BUILDERS[v] for v in views}
    builders.update({r: _pg_catalog.RELATIONS[r] for r in relations})
    for name, build in builders.items():
        built = build(tables)
        batches = built.to_batches() or [pa.RecordBatch.from_pylist([], built.schema)]
        context.register_record_batches(name, [batches])
    local = _VIEW.sub(lambda m: f"information_schema_{m.group(1).lower()}", sql)
    local = _OPERATOR.sub(lambda m: m.group(1), local)
    local = _PG_PREFIX.sub("", _COLLATE.sub("", local))
    local = _SEARCH_PATH_RANK.sub("ORDER BY", _SEARCH_PATH_JOIN.sub("", local))
    local = _ARRAY_UPPER.sub("array_length(", local)
    local = _REG_LITERAL.sub(lambda m: str(_CATALOG_OIDS.get(m.group(1).lower(), 0)), local)
    local = _GET_EXPR.sub(r"pg_get_expr(\1,\2)", _REG_CAST.sub("", local))
    local = _without_subqueries(local)
    try:
        table = contained(lambda: context.sql(local).to_arrow_table())
    except EngineFailedError:
        raise
    except Exception as e:  # DataFusion's errors carry the reason in their text
        raise SqlError(f"catalog query failed: {e}") from e
    return QueryResult(table, "OK")


def _without_subqueries(sql: str) -> str:
    """``sql`` with each parenthesised subquery over pg_attrdef or pg_collation as NULL.

    >>> _without_subqueries("SELECT a, (SELECT f(d.x, 1) FROM pg_attrdef d WHERE (y)) AS z")
    'SELECT a, NULL AS z'
    """
    while match := _SCALAR.search(sql):
        depth, end = 0, match.start()
        for end in range(match.start(), len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            if depth == 0:
                break
        sql = sql[: match.start()] + "NULL" + sql[end + 1 :]
    return sql


def _tables(tables: list) -> pa.Table:  # type: ignore[type-arg]
    names = [info.name for info in tables]
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


def _columns(tables: list) -> pa.Table:  # type: ignore[type-arg]
    rows: dict[str, list] = {n: [] for n in _COLUMN_TYPES}  # type: ignore[type-arg]
    for info in tables:
        nullable = {c.name: c.nullable for c in info.columns}
        for position, field in enumerate(info.schema, start=1):
            oid = t.type_oid(field)
            element = _ELEMENT.get(oid)
            data_type, udt = (
                ("ARRAY", "_" + _NAMES[element][1]) if element else _NAMES.get(oid, _NAMES[t.TEXT])
            )
            values: tuple[Any, ...] = (DATABASE, SCHEMA, info.name, field.name, position)
            values += ("YES" if nullable.get(field.name, True) else "NO", data_type, udt)
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
}


def _schemata(_tables: list) -> pa.Table:  # type: ignore[type-arg]
    names = [SCHEMA, "information_schema"]
    return pa.table(
        {"catalog_name": [DATABASE] * 2, "schema_name": names, "schema_owner": ["kyma"] * 2}
    )


_BUILDERS: dict[str, Callable[[list], pa.Table]] = {  # type: ignore[type-arg]
    "tables": _tables,
    "columns": _columns,
    "schemata": _schemata,
}
