"""Time order: ``SELECT … FROM t [WHERE …] ORDER BY _timestamp DESC|ASC LIMIT k [OFFSET o]``
reads the newest (oldest) extents first and stops once its rows are certain.

Two passes. The probe reads, in time order from the catalog's extent bounds (``min_ts``,
``max_ts``), growing sets of extents — the first holding ``k + o`` rows, each next eight
times the rows of the last — and asks them for the ``_timestamp`` of the first ``k + o``
rows the WHERE keeps (only ``_timestamp`` and the filter columns are decoded). Once a set
yields ``k + o`` rows, or the whole table is read, the last row's time ``τ`` bounds the
answer: the table has at least those rows at or after ``τ`` (DESC), so no row before ``τ``
is among the first ``k + o``. The statement then runs on the extents that reach ``τ``,
filtered to ``_timestamp >= τ`` inside the Parquet scan: pruned by row-group and page
statistics, and the other columns decoded only for the rows that pass (late
materialization). Rows tied at ``τ`` are all kept, so a further ORDER BY key orders them as
Postgres does. A probe that read the whole table and found fewer rows than needed saw every
matching row: the statement then reads only the extents and row groups holding their times
(up to ``TIMES`` distinct ones). A table none of whose rows match is answered from no
extent. A statement
with a volatile function (``random()``) is not probed: the two passes would see different
rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import Expr, col, lit
from sqlglot import exp

from kyma.engine.catalog import ExtentRef

TIME = "_timestamp"
TIMES = 1024
"""At most this many distinct times bound the statement's rows (more: the floor). They are
an OR of equalities, balanced: DataFusion prunes row groups and pages by each (an IN list
prunes by at most 20 values)."""
GROWTH = 8
"""How much larger each probe's set of extents is than the last, in rows."""
MAX_ROWS = 10_000
"""A LIMIT + OFFSET past this is answered by the plain scan (the probe's answer stays small)."""
_CLAUSES = ("joins", "group", "having", "qualify", "distinct", "windows", "laterals", "with")
_ROW_MAKERS = (exp.AggFunc, exp.Window, exp.Unnest, exp.Explode, exp.UDTF, exp.Subquery)


@dataclass(frozen=True)
class TimeOrder:
    """A statement's time order: its table (session name), direction, the rows it needs in
    order (LIMIT + OFFSET), the probe's SQL and the LIMIT."""

    table: str
    descending: bool
    needed: int
    probe: str
    limit: int


def of(stmt: exp.Expression, tables: set[str]) -> TimeOrder | None:
    """The time order of ``stmt`` (as handed to DataFusion) over one of ``tables``, if it is
    a plain top-k by ``_timestamp`` of one table; None otherwise.

    >>> of(exp.maybe_parse('SELECT a FROM t WHERE b = 1 ORDER BY _timestamp DESC LIMIT 5'), {"t"})
    TimeOrder(table='t', descending=True, needed=5, probe='SELECT "t"."_timestamp" FROM "t" WHERE "b" = 1 ORDER BY "t"."_timestamp" DESC NULLS LAST LIMIT 5', limit=5)
    >>> of(exp.maybe_parse("SELECT count(*) FROM t ORDER BY _timestamp LIMIT 5"), {"t"}) is None
    True
    """  # noqa: E501
    if not isinstance(stmt, exp.Select) or any(stmt.args.get(k) for k in _CLAUSES):
        return None
    if stmt.find(exp.Rand) is not None:
        return None
    source = stmt.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or table.name not in tables:
        return None
    alias = table.alias_or_name
    order = stmt.args.get("order")
    first = order.expressions[0] if order is not None and order.expressions else None
    if not isinstance(first, exp.Ordered) or not _is_time(first.this, alias):
        return None
    for selected in stmt.expressions:
        if any(isinstance(node, _ROW_MAKERS) for node in selected.walk()):
            return None
        if selected.alias_or_name == TIME and not _is_time(selected.unalias(), alias):
            return None  # ORDER BY names this output column, not the table's
    limit = _number(stmt.args.get("limit"))
    offset = _number(stmt.args.get("offset")) if stmt.args.get("offset") else 0
    if limit is None or offset is None or not 0 < limit + offset <= MAX_ROWS:
        return None
    needed = limit + offset
    descending = bool(first.args.get("desc"))
    probe = stmt.copy()
    probe.set("expressions", [exp.column(TIME, table=alias, quoted=True)])
    probe.set("offset", None)
    probe.set("limit", exp.Limit(expression=exp.Literal.number(needed)))
    ordered = first.copy()
    ordered.set("this", exp.column(TIME, table=alias, quoted=True))
    probe.set("order", exp.Order(expressions=[ordered]))
    sql = probe.sql(dialect="postgres", identify=True, normalize_functions="lower")
    return TimeOrder(table.name, descending, needed, sql, limit)


def _is_time(node: exp.Expression, alias: str) -> bool:
    return isinstance(node, exp.Column) and node.name == TIME and node.table in ("", alias)


def _number(clause: exp.Expression | None) -> int | None:
    """A LIMIT's or OFFSET's number, None when it has none or not a plain one."""
    value = clause.args.get("expression") if clause is not None else None
    return int(value.this) if isinstance(value, exp.Literal) and value.is_int else None


@dataclass(frozen=True)
class Window:
    """Which extents a pass reads: the first ``rows`` in time order (a probe; 0: none), or
    those that reach ``floor`` (the statement, its rows filtered to it), or those holding
    one of ``times`` (every matching row's time, when the probe read them all); none: all."""

    descending: bool
    rows: int | None = None
    skip: int = 0  # with ``rows``: the first extents left out (an earlier probe read them)
    floor: int | None = None
    times: tuple[int, ...] | None = None
    seen: int = 0  # with ``times``: the matching rows the probe found

    def expected(self, order: TimeOrder) -> int:
        """The fewest rows the statement answers through this window, if nothing changed
        between the passes (0: no bound to check)."""
        if self.times is not None:
            return max(0, min(order.limit, self.seen - (order.needed - order.limit)))
        return order.limit if self.floor is not None else 0

    def extents(self, extents: list[ExtentRef]) -> list[ExtentRef]:
        if self.times is not None:
            return [e for e in extents if any(_holds(e, t) for t in self.times)]
        if self.floor is not None:
            return [e for e in extents if self._reaches(e, self.floor)]
        if self.rows is None:
            return extents
        chosen, held = [], 0
        for extent in ranked(extents, self.descending):
            if held >= self.rows:
                break
            chosen.append(extent)
            held += extent.live_rows
        return chosen[self.skip :]

    def _reaches(self, extent: ExtentRef, floor: int) -> bool:
        if self.descending:
            return extent.max_ts is None or extent.max_ts >= floor
        return extent.min_ts is None or extent.min_ts <= floor

    def filter(self) -> Expr | None:
        """The statement's rows: those at or past the floor, or at one of the times."""
        if self.times is not None:
            return _any([col(TIME) == _at(t) for t in self.times])
        if self.floor is None:
            return None
        return col(TIME) >= _at(self.floor) if self.descending else col(TIME) <= _at(self.floor)


def _any(terms: list[Expr]) -> Expr:
    """``a OR b OR …`` as a balanced tree (its depth the log of its terms)."""
    if len(terms) == 1:
        return terms[0]
    half = len(terms) // 2
    return _any(terms[:half]) | _any(terms[half:])


def _at(ns: int) -> Expr:
    return lit(pa.scalar(ns, pa.timestamp("ns", tz="UTC")))


def _holds(extent: ExtentRef, ns: int) -> bool:
    low, high = extent.min_ts, extent.max_ts
    return (low is None or low <= ns) and (high is None or ns <= high)


def ranked(extents: list[ExtentRef], descending: bool) -> list[ExtentRef]:
    """Newest first (by ``max_ts``) or oldest first (by ``min_ts``); unknown bounds first."""
    if descending:
        return sorted(extents, key=lambda e: -e.max_ts if e.max_ts is not None else -(2**63))
    return sorted(extents, key=lambda e: e.min_ts if e.min_ts is not None else -(2**63))


def first_times(seen: pa.Table, probed: pa.Table, order: TimeOrder) -> pa.Table:
    """The first ``order.needed`` times (int64, in the statement's order) of the rows an
    earlier probe ``seen`` and of those a probe of other extents found.

    >>> order = TimeOrder("t", True, 2, "", 2)
    >>> seen = pa.table({TIME: pa.array([5], pa.int64())})
    >>> first_times(seen, pa.table({TIME: pa.array([9, 3], pa.int64())}), order)[0].to_pylist()
    [9, 5]
    """
    times = pa.concat_arrays(
        [seen.column(0).combine_chunks(), probed.column(0).cast(pa.int64()).combine_chunks()]
    )
    way = "descending" if order.descending else "ascending"
    ordered = times.take(pc.array_sort_indices(times, order=way))
    return pa.table({TIME: ordered[: order.needed]})


def floor_of(probed: pa.Table, needed: int, whole: bool) -> int | None:
    """τ: the time of the probe's last row when it found all the rows needed or read the
    ``whole`` table (then every matching row is at or past it); None when it found neither
    (or, over the whole table, no row)."""
    if probed.num_rows < needed and not (whole and probed.num_rows):
        return None
    return int(probed.column(0).cast(pa.int64())[probed.num_rows - 1].as_py())
