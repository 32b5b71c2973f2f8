"""Answers from exact statistics: ``SELECT count(*), min(c), max(c) FROM t``, nothing read.

``count(*)`` is the catalog's live row counts. ``min``/``max`` of a timestamp or integer
column are its block stats (``ColStat``, computed from every value when the extent was
written; parsed footers are cached), and of ``_timestamp`` the catalog's extent bounds. An
extent with deleted rows keeps the stats of the rows it was written with, which no longer
bound it: a statement over such an extent, or one whose stats are missing or capped, is
answered by the scan instead (``answer`` returns None).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import ExtentRef, TableInfo
from kyma.engine.format.predicate import BlockStats

_EXACT = {"int", "long", "timestamp"}  # column kinds whose block stats are exact min/max
_CLAUSES = (
    "joins",
    "where",
    "group",
    "having",
    "qualify",
    "distinct",
    "limit",
    "offset",
    "order",
    "with",
    "windows",
    "laterals",
)
TIME = "_timestamp"


@dataclass(frozen=True)
class Aggregate:
    """``count(*)`` (column None), ``min(column)`` or ``max(column)``."""

    function: str
    column: str | None


@dataclass(frozen=True)
class Statistics:
    """What a statement asks that statistics answer: its table's session name and calls."""

    table: str
    aggregates: tuple[Aggregate, ...]


def of(stmt: exp.Expression, tables: dict[str, TableInfo]) -> Statistics | None:
    """The aggregates of ``SELECT count(*), min(c), max(c), … FROM t`` and nothing more,
    over a table of ``tables`` (by session name) whose ``c`` are timestamps or integers.

    >>> from kyma.engine.types import Column, KymaType
    >>> info = TableInfo(1, "t", (Column("n", KymaType("long")),), None, None)
    >>> of(exp.maybe_parse("SELECT max(n), count(*) FROM t"), {"t": info}).aggregates
    (Aggregate(function='max', column='n'), Aggregate(function='count', column=None))
    >>> of(exp.maybe_parse("SELECT max(n) FROM t WHERE n > 1"), {"t": info}) is None
    True
    """
    if not isinstance(stmt, exp.Select) or any(stmt.args.get(k) for k in _CLAUSES):
        return None
    source = stmt.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or table.name not in tables or not stmt.expressions:
        return None
    kinds = {c.name: c.type.name for c in tables[table.name].columns}
    names = {table.alias_or_name, table.name, ""}
    found = []
    for call in stmt.expressions:
        call = call.this if isinstance(call, exp.Alias) else call
        if isinstance(call, exp.Count) and isinstance(call.this, exp.Star):
            found.append(Aggregate("count", None))
            continue
        if not isinstance(call, (exp.Min, exp.Max)) or call.expressions:
            return None
        column = call.this
        if not isinstance(column, exp.Column) or column.table not in names:
            return None
        if kinds.get(column.name) not in _EXACT:
            return None
        found.append(Aggregate("min" if isinstance(call, exp.Min) else "max", column.name))
    return Statistics(table.name, tuple(found))


def answer(
    wanted: Statistics,
    info: TableInfo,
    extents: list[ExtentRef],
    blocks: Callable[[ExtentRef], list[BlockStats] | None],
) -> pa.Table | None:
    """The one-row answer from ``extents``' counts and ``blocks`` (an extent's block stats,
    None when it has none); None when some extent's stats do not bound its rows exactly."""
    columns = {c.name: c.to_arrow().type for c in info.columns}
    bounds: dict[str, tuple[int | None, int | None]] = {}
    for name in {a.column for a in wanted.aggregates if a.column is not None}:
        found = _bounds(name, extents, blocks)
        if found is None:
            return None
        bounds[name] = found
    values, fields = [], []
    for i, aggregate in enumerate(wanted.aggregates):
        if aggregate.column is None:  # never null, as DataFusion's count(*) says
            values.append(pa.array([sum(e.live_rows for e in extents)], pa.int64()))
            fields.append(pa.field(f"_{i}", pa.int64(), nullable=False))
            continue
        low, high = bounds[aggregate.column]
        value = low if aggregate.function == "min" else high
        kind = columns[aggregate.column]
        stored = pa.int64() if pa.types.is_timestamp(kind) else kind
        values.append(pa.array([value], stored).cast(kind))
        fields.append(pa.field(f"_{i}", kind))
    return pa.Table.from_arrays(values, schema=pa.schema(fields))


def _bounds(
    column: str, extents: list[ExtentRef], blocks: Callable[[ExtentRef], list[BlockStats] | None]
) -> tuple[int | None, int | None] | None:
    """The least and greatest value of ``column`` over the extents (None, None: no value);
    None when the stats do not say exactly."""
    low: int | None = None
    high: int | None = None
    for extent in extents:
        if extent.live_rows == 0:
            continue
        if extent.deletes is not None:
            return None
        if column == TIME and extent.min_ts is not None and extent.max_ts is not None:
            pairs = [(extent.min_ts, extent.max_ts)]
        else:
            found = blocks(extent)
            if found is None:
                return None
            pairs = []
            for block in found:
                stat = block.columns.get(column)
                if stat is None or stat.kind not in ("Ts", "Int64"):
                    return None
                if stat.nulls == block.row_count:
                    continue
                if stat.min is None or stat.max is None:
                    return None
                pairs.append((int(stat.min), int(stat.max)))
        for lo, hi in pairs:
            low = lo if low is None else min(low, lo)
            high = hi if high is None else max(high, hi)
    return low, high
