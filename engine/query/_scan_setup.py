"""The scan half of ``SelectPlanner`` (its base): sessions, stage 1 in the catalog, the
columns and predicates a statement reads per table, and each table's scan registered in a
session; answers from statistics and the probes of a top-k by time."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import asdict
from functools import partial

import pyarrow as pa
import sqlglot.errors
from datafusion import SessionContext
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from kyma.engine import deletes
from kyma.engine.catalog import ExtentRef
from kyma.engine.format import SegmentFormat
from kyma.engine.format.predicate import BlockPredicate, BlockStats
from kyma.engine.query import (
    _contexts,
    _jsonb_columns,
    _native,
    _path_columns,
    _statistics,
    udfs,
)
from kyma.engine.query._datafusion import run_datafusion
from kyma.engine.query._decoded import DecodedColumns
from kyma.engine.query._estimate import GUARDS, register_guard
from kyma.engine.query._limits import QueryLimits, cancelled_with_statement, session_context
from kyma.engine.query._lower import lower
from kyma.engine.query._output_names import renamed
from kyma.engine.query._plans import Plan
from kyma.engine.query._recent import Recent
from kyma.engine.query._resolution import TableResolution
from kyma.engine.query._result import QueryResult
from kyma.engine.query._scan import ScanStats, TableScan
from kyma.engine.query._sources import Source
from kyma.engine.query._sql_types import sql_type
from kyma.engine.query._statistics import Statistics
from kyma.engine.query._syntax import unresolved
from kyma.engine.query._time_order import (
    GROWTH,
    TIME,
    TIMES,
    TimeOrder,
    Window,
    first_times,
    floor_of,
)
from kyma.engine.query.durations import ms_since
from kyma.engine.query.rewrite import current_state
from kyma.engine.query.rewrite.time_travel import split_versioned
from kyma.engine.storage import ObjectStore

PARTITIONS = max(2, os.cpu_count() or 2)


class ScanSetup(TableResolution):
    """What ``SelectPlanner`` sets for these: its store, format, limits, kyma's extra
    functions, the stage-1 answers kept and the decoded columns kept."""

    store: ObjectStore
    format: SegmentFormat
    limits: QueryLimits | None
    decoded: DecodedColumns
    _functions: list
    _pruned: Recent[tuple[int, list[ExtentRef]]]

    def _session(self, called: Collection[str] | None = None, late: bool = False) -> SessionContext:
        """A DataFusion session with kyma's functions and the statement's memory pool:
        those a planned statement ``called`` (None: every one, to plan with); ``late``:
        filters pushed into the Parquet decoder."""
        pool = self.limits.memory_bytes if self.limits is not None else 0
        ctx = _contexts.session((pool, late), partial(session_context, self.limits, late))
        udfs.register(ctx, called=called)
        udfs.register(ctx, self._functions, called)
        guards = called is None or not GUARDS.isdisjoint(called)
        if self.limits is not None and self.limits.memory_bytes and guards:
            register_guard(ctx, self.limits.memory_bytes)
        return ctx

    def _from_statistics(
        self, wanted: Statistics, plan: Plan, started: float, how: str
    ) -> QueryResult | None:
        """``SELECT count(*), min(c), max(c) FROM t`` from the catalog's counts and the
        extents' exact stats, nothing read; None when the stats do not say exactly."""
        source = plan.sources[wanted.table]
        total, extents = self._stage1(source, None)

        def blocks(extent: ExtentRef) -> list[BlockStats] | None:
            footer = _native.footer_of(self.store, self.format, extent.object_path)
            return footer.block_stats if footer is not None else None

        table = _statistics.answer(wanted, source.info, extents, blocks)
        if table is None:
            return None
        stats = ScanStats(total, len(extents), sum(e.block_count for e in extents))
        summary = {
            **asdict(stats),
            "elapsed_ms": ms_since(started),
            "plan": how,
            "tables": {wanted.table: asdict(stats)},
        }
        return QueryResult(renamed(table, plan.names), "SELECT", summary, [])

    def _probe(self, plan: Plan, order: TimeOrder, folders: _native.Folders) -> Window:
        """The extents and rows a top-k by time reads (``_time_order``): probes of growing
        sets of extents in time order until they hold the rows needed. Each probe reads only
        the extents the last ones did not: a set that yielded fewer rows than needed gave
        every matching row's time, kept with the new ones."""
        source = plan.sources[order.table]
        _, extents = self._stage1(source, source.predicate)
        rows, done = order.needed, 0
        seen = pa.table({TIME: pa.array([], pa.int64())})
        while True:
            ctx = self._session(plan.functions, late=True)
            window = Window(order.descending, rows=rows, skip=done)
            chosen = Window(order.descending, rows=rows).extents(extents)
            self._register(ctx, order.table, source, folders, window)
            probed = run_datafusion(ctx, order.probe, limits=self.limits)
            seen = first_times(seen, probed, order)
            whole = len(chosen) == len(extents)
            if whole and 0 < seen.num_rows < order.needed:  # every matching row's time seen
                times = set(seen.column(0).to_pylist())
                if len(times) <= TIMES:
                    found = tuple(sorted(times))
                    return Window(order.descending, times=found, seen=seen.num_rows)
            floor = floor_of(seen, order.needed, whole)
            if floor is not None:
                return Window(order.descending, floor=floor)
            if whole:
                return Window(order.descending, rows=0)  # no row matches: none to read
            done = len(chosen)
            rows = max(sum(e.live_rows for e in chosen), rows) * GROWTH

    def _stage1(
        self, source: Source, predicate: BlockPredicate | None
    ) -> tuple[int, list[ExtentRef]]:
        """Stage 1 in the catalog. A snapshot's extents never change, so the answer for the
        table's current snapshot (a time-travel read checks its snapshot still exists) is
        kept for the next statement with the same predicate."""
        info = source.info
        key = (info.table_id, info.current_snapshot_id, predicate)
        if source.snapshot is None and (found := self._pruned.get(key)) is not None:
            return found
        pruned = self.catalog.prune_extents(
            info.name, source.snapshot, predicate, cancelled_with_statement, info
        )
        if source.snapshot is None:
            self._pruned.put(key, pruned)
        return pruned

    def _local_schemas(self, stmt: exp.Expression) -> dict[str, dict[str, str]]:
        """``{table: {column: SQL type}}`` for the kyma tables a federated statement names."""
        schemas = {}
        for raw, _ in self.local_tables(stmt):
            info, current = self._table_info(split_versioned(raw)[0], {})
            hidden = current_state.HIDDEN if current else ()
            schemas[raw] = {
                c.name: sql_type(c.type.name) for c in info.columns if c.name not in hidden
            }
        return schemas

    def _analyze(
        self,
        stmt: exp.Expression,
        sources: dict[str, Source],
        fetched: dict[str, dict[str, str]],
        *,
        pruning: bool,
    ) -> None:
        """Per source: the columns the query touches and the WHERE it can prune with.

        ``fetched`` holds the columns of federated scans' answers, for name resolution.
        """
        if not sources:
            return
        schema: dict[str, object] = {**self._session_schemas(sources), **fetched}
        calls = _path_columns.tag(stmt)
        typed = _jsonb_columns.tag(stmt)
        try:
            qualified = qualify(
                stmt.copy(), schema=schema, dialect="postgres", quote_identifiers=False
            )
        except sqlglot.errors.OptimizeError as e:
            tables = [t.name for t in stmt.find_all(exp.Table) if t.name in sources]
            known = {name: {c.name for c in s.info.columns} for name, s in sources.items()}
            raise unresolved(str(e), lambda c: sum(c in known[t] for t in tables)) from None
        names = {c.name for c in qualified.find_all(exp.Column)}
        for source in sources.values():
            source.columns = names & {c.name for c in source.info.columns}
        for scope in traverse_scope(qualified):
            where = scope.expression.args.get("where") if scope.expression else None
            for alias, node in scope.selected_sources.items():
                table = node[0] if isinstance(node, tuple) else node
                if isinstance(table, exp.Table) and table.name in sources:
                    source = sources[table.name]
                    columns = {c.name: c.type for c in source.info.columns}
                    condition = where.this if where is not None and pruning else None
                    source.predicates.append(lower(condition, alias, columns))
        dynamic = {
            name: {c.name for c in s.info.columns if c.type.name == "dynamic"}
            for name, s in sources.items()
        }
        _jsonb_columns.rewrite(typed, qualified, dynamic)
        for name, paths in _path_columns.rewrite(calls, qualified, dynamic).items():
            source = sources[name]
            source.paths = paths
            source.columns = _path_columns.still_read(stmt, source.columns, paths)

    def _session_schemas(self, sources: dict[str, Source]) -> dict[str, dict[str, str]]:
        return {
            f'"{name}"': {
                **{c.name: sql_type(c.type.name) for c in s.info.columns},
                **{p.name: "TEXT" for p in s.paths},
                **(
                    dict(zip(deletes.ROW_COLUMNS, ("TEXT", "BIGINT"), strict=True))
                    if s.rows
                    else {}
                ),
            }
            for name, s in sources.items()
        }

    def _register(
        self,
        ctx: SessionContext,
        name: str,
        source: Source,
        folders: _native.Folders,
        window: Window | None = None,
    ) -> tuple[ScanStats, bool]:
        """What the scan reads, and whether it lists Parquet files (not all in memory).
        ``window``: a top-k by time's extents and rows (None: every one), read from
        Parquet: DataFusion's top-k over the decoded columns' memory table took 150–200 ms for
        250 k rows in time order (each row displaces the heap), over Parquet 10–30 ms."""
        fields = [c.to_arrow() for c in source.info.columns if c.name in source.columns]
        fields += [pa.field(p.name, pa.string()) for p in source.paths]
        if source.rows:
            fields += [pa.field(deletes.ROW_COLUMNS[0], pa.string())]
            fields += [pa.field(deletes.ROW_COLUMNS[1], pa.int64())]
        schema = pa.schema(fields or [source.info.columns[0].to_arrow()])
        scan = TableScan(schema, source.predicate, paths=source.paths, rows=source.rows)
        total, survivors = self._stage1(source, scan.predicate)
        where = None
        if window is not None:
            survivors, where = window.extents(survivors), window.filter()
        scan.stats.extents_total = total
        scan.stats.extents_after_catalog = len(survivors)
        listed = _native.register(
            ctx,
            name,
            scan,
            survivors,
            self.store,
            self.format,
            folders,
            PARTITIONS,
            self.decoded if window is None else None,  # a top-k by time: Parquet's order
            where,
        )
        return scan.stats, listed
