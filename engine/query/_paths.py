"""``SHOW PATHS FROM t.column``: which paths a dynamic column holds, from the catalog.

One row per path the live extents of ``t`` record in their manifests (``present_paths``):
``path`` as a Postgres text array (ready for ``column #>> '{http,method}'``), ``types`` the
types the extents' shredded sub-columns hold at it (``object`` when deeper paths exist below
it; NULL when neither tells), ``extents`` how many extents hold it and ``rows`` the rows of
those extents (an upper bound of the rows holding it). An extent that held more paths than
its manifest lists records only "some path": a row with a NULL path counts those.
"""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import Catalog
from kyma.engine.errors import NotFoundError, SchemaError
from kyma.engine.format import SegmentFormat
from kyma.engine.query._native import footer_of
from kyma.engine.query._parse import identifier, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query.dialect import KymaStatement
from kyma.engine.storage import ObjectStore


def target(stmt: KymaStatement) -> tuple[str, str]:
    """The table and column ``SHOW PATHS FROM …`` names."""
    column = stmt.this
    assert isinstance(column, exp.Column)
    table = exp.Table(
        this=column.args["table"], db=column.args.get("db"), catalog=column.args.get("catalog")
    )
    return table_name(table), identifier(column.this)


def show_paths(
    catalog: Catalog, store: ObjectStore, fmt: SegmentFormat, stmt: KymaStatement
) -> QueryResult:
    name, column = target(stmt)
    info = catalog.get_table(name)
    found = info.column(column)
    if found is None:
        raise NotFoundError(f"column {column!r} of table {name!r} does not exist")
    if found.type.name != "dynamic":
        raise SchemaError(f"column {column!r} is {found.type.name}, not dynamic: it has no paths")
    extents: dict[tuple[str, ...] | None, int] = defaultdict(int)
    rows: dict[tuple[str, ...] | None, int] = defaultdict(int)
    types: dict[tuple[str, ...] | None, set[str]] = defaultdict(set)
    for entry in catalog.live_extents(name):
        for recorded in entry.present_paths:
            path = _segments(recorded, column)
            if path == ():
                continue
            extents[path] += 1
            rows[path] += entry.row_count
        footer = footer_of(store, fmt, entry.object_path)
        for shred in footer.shredded if footer is not None else ():
            if shred.column == column:
                types[tuple(shred.path)].add(shred.type)
    listed = [p for p in extents if p]
    for path in listed:
        if any(len(other) > len(path) and other[: len(path)] == path for other in listed):
            types[path].add("object")
    order = sorted(extents, key=lambda p: (p is None, p or ()))
    table = pa.table(
        {
            "path": pa.array([None if p is None else _text_array(p) for p in order], pa.string()),
            "types": pa.array(
                [(sorted(types[p]) or None) if p is not None else None for p in order],
                pa.list_(pa.string()),
            ),
            "extents": pa.array([extents[p] for p in order], pa.int64()),
            "rows": pa.array([rows[p] for p in order], pa.int64()),
        }
    )
    return QueryResult(table, "SHOW PATHS")


def _segments(recorded: str, column: str) -> tuple[str, ...] | None:
    """A manifest path's keys; None for the bare column ("some path"); ``()`` for another
    column's path."""
    if recorded == column:
        return None
    head, _, rest = recorded.partition("/")
    if head != column or not rest:
        return ()
    return tuple(s.replace("~1", "/").replace("~0", "~") for s in rest.split("/"))


def _text_array(path: tuple[str, ...]) -> str:
    """Keys as a Postgres text array literal: ``{http,method}``, quoting where needed."""
    return "{" + ",".join(_element(key) for key in path) + "}"


def _element(key: str) -> str:
    plain = key and key.upper() != "NULL" and not any(c in key for c in '{},"\\ \t\n')
    if plain:
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
