"""Views in the catalog database (``sql/014_views.sql``): create or replace, look up, drop.

Tables and views share one namespace (a trigger refuses a name the other kind holds). A
table or view that views read is dropped only with them (``CASCADE``), as in Postgres. A
materialized view is a view whose query reads the table holding its rows (``storage``),
dropped with it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import psycopg
import pyarrow as pa
from psycopg.types.json import Jsonb

from kyma.engine.catalog._model import ViewInfo
from kyma.engine.catalog.base import Payload, Transaction
from kyma.engine.errors import (
    DependentObjectsError,
    DuplicateRelationError,
    InvalidViewError,
    NotFoundError,
    StaleCommitError,
    WrongObjectTypeError,
)
from kyma.engine.types import KYMA_TYPE_KEY

_COLUMNS = (
    "view_id, name, query, schema, reads, created_at, definition, storage, base, base_snapshot"
)


def create(
    conn: psycopg.Connection,
    name: str,
    query: str,
    schema: pa.Schema,
    reads: Sequence[str],
    *,
    replace: bool,
    materialized: ViewInfo | None = None,
) -> ViewInfo:
    """Store a view; with ``replace`` an existing view keeps its columns' names and types
    and may only gain columns at the end (42P16 otherwise). ``materialized``: a new
    materialized view's definition, storage, base and base snapshot (its other fields are
    not read)."""
    with conn.transaction():
        old = _views(conn, "name = %s FOR UPDATE", (name,))
        blob = schema.serialize().to_pybytes()
        columns = Jsonb([[f.name, pg_type_name(f)] for f in schema])
        try:
            if old and (old[0].materialized or materialized is not None):
                raise DuplicateRelationError(f'relation "{name}" already exists')
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
                m = materialized
                conn.execute(
                    "INSERT INTO kyma.views (name, query, columns, schema, reads, definition,"
                    " storage, base, base_snapshot) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        name,
                        query,
                        columns,
                        blob,
                        list(reads),
                        *((m.definition, m.storage, m.base, m.base_snapshot) if m else [None] * 4),
                    ),
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


KINDS = ("table", "view", "materialized view")


def drop(
    conn: psycopg.Connection, names: Sequence[str], kind: str, *, if_exists: bool, cascade: bool
) -> int:
    """Drop the relations ``names`` of ``kind`` (``KINDS``) together, in one transaction:
    WrongObjectTypeError (42809) for one of another kind, NotFoundError (42P01) for a
    missing one (unless ``if_exists``), DependentObjectsError (2BP01) when views outside
    them read them, unless ``cascade`` drops those views too. How many of ``names``
    existed; a materialized view's storage table is dropped with it."""
    with conn.transaction():
        found: list[str] = []
        for name in dict.fromkeys(names):
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('kyma.relation/' || %s))", (name,))
            has = _kind_of(conn, name)
            if has is None:
                if not if_exists:
                    missing = f"table {name!r}" if kind == "table" else f'{kind} "{name}"'
                    raise NotFoundError(f"{missing} does not exist")
                continue
            if has != kind:
                raise WrongObjectTypeError(f'"{name}" is not a {kind}')
            found.append(name)
        gone = set(found)
        readers = _readers(conn, gone)
        if readers and not cascade:
            first = next(n for n in found if _readers(conn, {n}) - gone)
            raise DependentObjectsError(
                f"cannot drop {kind} {first} because other objects depend on it"
            )
        views = sorted((gone | readers) - ({*found} if kind == "table" else set()))
        storage = [
            r[0]
            for r in conn.execute(
                "SELECT storage FROM kyma.views WHERE name = ANY(%s) AND storage IS NOT NULL",
                (views,),
            )
        ]
        conn.execute("DELETE FROM kyma.views WHERE name = ANY(%s)", (views,))
        tables = [*storage, *(found if kind == "table" else [])]
        conn.execute("DELETE FROM kyma.tables WHERE name = ANY(%s)", (tables,))
        return len(found)


def _kind_of(conn: psycopg.Connection, name: str) -> str | None:
    """``name``'s kind of relation (``KINDS``), or None."""
    row = conn.execute(
        "SELECT definition IS NOT NULL FROM kyma.views WHERE name = %s FOR UPDATE", (name,)
    ).fetchone()
    if row is not None:
        return "materialized view" if row[0] else "view"
    if conn.execute("SELECT 1 FROM kyma.tables WHERE name = %s FOR UPDATE", (name,)).fetchone():
        return "table"
    return None


def _readers(conn: psycopg.Connection, names: set[str]) -> set[str]:
    """The views that read any of ``names``, directly or through other views (not those
    among ``names``)."""
    found: set[str] = set()
    frontier = set(names)
    while frontier:
        rows = conn.execute(
            "SELECT name FROM kyma.views WHERE reads && %s::text[]", (sorted(frontier),)
        ).fetchall()
        frontier = {r[0] for r in rows} - found - names
        found |= frontier
    return found


def advance(name: str, was: int | None, now: int | None) -> Payload:
    """A commit's payload moving materialized view ``name``'s base snapshot from ``was`` to
    ``now``; StaleCommitError (the commit rolls back) when another moved it first."""

    def run(tx: Transaction, _snapshot_id: int) -> None:
        cur = tx.execute(
            "UPDATE kyma.views SET base_snapshot = %s WHERE name = %s"
            " AND base_snapshot IS NOT DISTINCT FROM %s",
            (now, name, was),
        )
        if cur.rowcount != 1:
            raise StaleCommitError(f"materialized view {name!r} was refreshed meanwhile")

    return run


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
        ViewInfo(i, n, q, pa.ipc.read_schema(pa.py_buffer(s)), tuple(r), c, *rest)
        for i, n, q, s, r, c, *rest in rows
    ]
