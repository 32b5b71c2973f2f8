"""Views in the catalog database (``sql/014_views.sql``): create or replace, look up, drop.

Tables and views share one namespace (a trigger refuses a name the other kind holds). A view
that others read cannot be dropped, nor a table a view reads, as in Postgres (no CASCADE).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg
import pyarrow as pa
from psycopg.types.json import Jsonb

from kyma.engine.catalog._model import ViewInfo
from kyma.engine.errors import (
    DependentObjectsError,
    DuplicateRelationError,
    InvalidViewError,
    NotFoundError,
    WrongObjectTypeError,
)
from kyma.engine.types import KYMA_TYPE_KEY

_COLUMNS = "view_id, name, query, schema, reads, created_at"


def create(
    conn: psycopg.Connection,
    name: str,
    query: str,
    schema: pa.Schema,
    reads: Sequence[str],
    *,
    replace: bool,
) -> ViewInfo:
    """Store a view; with ``replace`` an existing view keeps its columns' names and types
    and may only gain columns at the end (42P16 otherwise)."""
    with conn.transaction():
        old = _views(conn, "name = %s FOR UPDATE", (name,))
        blob = schema.serialize().to_pybytes()
        columns = Jsonb([[f.name, pg_type_name(f)] for f in schema])
        try:
            if old and replace:
                _check_replaces(old[0].schema, schema)
                conn.execute(
                    "UPDATE kyma.views SET query = %s, columns = %s, schema = %s, reads = %s"
                    " WHERE name = %s",
                    (query, columns, blob, list(reads), name),
                )
            elif old:
                raise DuplicateRelationError(f'relation "{name}" already exists')
            else:
                conn.execute(
                    "INSERT INTO kyma.views (name, query, columns, schema, reads)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    (name, query, columns, blob, list(reads)),
                )
        except psycopg.errors.DuplicateTable:  # the trigger: a table has the name
            raise DuplicateRelationError(f'relation "{name}" already exists') from None
        return _views(conn, "name = %s", (name,))[0]


def get(conn: psycopg.Connection, names: Collection[str]) -> dict[str, ViewInfo]:
    wanted = sorted({n for n in names if "\x00" not in n})
    if not wanted:
        return {}
    return {v.name: v for v in _views(conn, "name = ANY(%s)", (wanted,))}


def every(conn: psycopg.Connection) -> list[ViewInfo]:
    return _views(conn, "TRUE ORDER BY name", ())


def drop(conn: psycopg.Connection, names: Sequence[str], *, if_exists: bool) -> int:
    """Drop views no other view reads (but those dropped with them); how many existed."""
    with conn.transaction():
        found = set()
        for name in names:
            if not _views(conn, "name = %s FOR UPDATE", (name,)):
                if conn.execute("SELECT 1 FROM kyma.tables WHERE name = %s", (name,)).fetchone():
                    raise WrongObjectTypeError(f'"{name}" is not a view')
                if not if_exists:
                    raise NotFoundError(f'view "{name}" does not exist')
                continue
            found.add(name)
        conn.execute("DELETE FROM kyma.views WHERE name = ANY(%s)", (sorted(found),))
        for name in sorted(found):
            refuse_dependents(conn, name, "view")
        return len(found)


def refuse_dependents(conn: psycopg.Connection, name: str, kind: str) -> None:
    """DependentObjectsError (2BP01) when views read ``name`` (a ``kind``): Postgres's
    message (pg_views lists which views read it)."""
    readers = conn.execute(
        "SELECT 1 FROM kyma.views WHERE reads @> ARRAY[%s::text]", (name,)
    ).fetchone()
    if readers:
        raise DependentObjectsError(f"cannot drop {kind} {name} because other objects depend on it")


def refuse_view(conn: psycopg.Connection, name: str) -> None:
    """WrongObjectTypeError (42809) when ``name`` is a view (DROP TABLE, TRUNCATE of it)."""
    if conn.execute("SELECT 1 FROM kyma.views WHERE name = %s", (name,)).fetchone():
        raise WrongObjectTypeError(f'"{name}" is not a table')


def _check_replaces(old: pa.Schema, new: pa.Schema) -> None:
    """Postgres's rule for CREATE OR REPLACE VIEW: the old columns, in order, unchanged."""
    if len(new) < len(old):
        raise InvalidViewError("cannot drop columns from view")
    for was, now in zip(old, new, strict=False):
        if was.name != now.name:
            raise InvalidViewError(
                f'cannot change name of view column "{was.name}" to "{now.name}"'
            )
        if pg_type_name(was) != pg_type_name(now):
            raise InvalidViewError(
                f'cannot change data type of view column "{was.name}" from'
                f" {pg_type_name(was)} to {pg_type_name(now)}"
            )


_PG_NAMES = {
    pa.bool_(): "boolean",
    pa.int16(): "smallint",
    pa.int32(): "integer",
    pa.int64(): "bigint",
    pa.float32(): "real",
    pa.float64(): "double precision",
    pa.string(): "text",
    pa.large_string(): "text",
    pa.string_view(): "text",
    pa.date32(): "date",
    pa.binary(): "bytea",
}


def pg_type_name(field: pa.Field) -> str:
    """Postgres's name of a column's type (``bigint``, ``text[]``), as its errors say it.

    >>> pg_type_name(pa.field("a", pa.list_(pa.int64())))
    'bigint[]'
    >>> pg_type_name(pa.field("t", pa.timestamp("ns", "UTC")))
    'timestamp with time zone'
    """
    dtype = field.type
    if (field.metadata or {}).get(KYMA_TYPE_KEY) == b"dynamic":
        return "jsonb"
    if (
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
    ):
        return pg_type_name(dtype.value_field) + "[]"
    if pa.types.is_timestamp(dtype):
        return "timestamp with time zone" if dtype.tz else "timestamp without time zone"
    if pa.types.is_decimal(dtype):
        return "numeric"
    return _PG_NAMES.get(dtype, str(dtype))


def _views(conn: psycopg.Connection, where: str, params: Any) -> list[ViewInfo]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM kyma.views WHERE {where}", params).fetchall()
    return [
        ViewInfo(i, n, q, pa.ipc.read_schema(pa.py_buffer(s)), tuple(r), c)
        for i, n, q, s, r, c in rows
    ]
