"""SELECT: resolve kyma tables, run the pruning cascade per table, execute on DataFusion.

The scan half (sessions, stage 1, scans registered) is ``_scan_setup``, its base."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import pyarrow as pa
from datafusion import DataFrame, SessionContext
from sqlglot import exp

from kyma.engine.catalog import Catalog, ExtentRef, TableInfo, ViewInfo, counting_reads
from kyma.engine.errors import KymaError, UnsupportedStatementError
from kyma.engine.format import SegmentFormat
from kyma.engine.query import (
    _contexts,
    _imports,
    _native,
    _running,
    _statistics,
    _time_order,
    udfs,
)
from kyma.engine.query._answers import (
    WHOLE,
    Out,
    Sink,
    as_answer,
    empty_batch,
    shaped,
    stored,
    sunk,
)
from kyma.engine.query._datafusion import (
    open_stream,
    planned,
    run_datafusion,
    run_frame,
    run_physical,
    stream_datafusion,
)
from kyma.engine.query._decoded import DecodedColumns, plain
from kyma.engine.query._explain import explained, with_elapsed
from kyma.engine.query._limits import (
    QueryLimits,
)
from kyma.engine.query._live import LiveRows
from kyma.engine.query._output_names import output_names, renamed
from kyma.engine.query._parse import parse
from kyma.engine.query._plans import STATEMENTS, Plan, fingerprint
from kyma.engine.query._prepared import MAX_BYTES, Prepared, Sessions, rerunnable, steady
from kyma.engine.query._recent import Recent
from kyma.engine.query._result import QueryResult
from kyma.engine.query._scan import ScanStats
from kyma.engine.query._scan_setup import ScanSetup
from kyma.engine.query._shapes import Shape, sentinels, sql_text
from kyma.engine.query._sources import declared, filters_fewer_columns, not_text
from kyma.engine.query._sql_types import arrow_sql_type
from kyma.engine.query._templates import Template, derive
from kyma.engine.query._time_order import (
    Window,
)
from kyma.engine.query.durations import ms_since
from kyma.engine.query.federation import FederatedScan, Federation, references_sources
from kyma.engine.query.relations import Relations
from kyma.engine.query.rewrite import (
    correlated,
    derived_aliases,
    evolved,
    has_token,
    numeric_input,
    numeric_literals,
    order_by_names,
    output_aliases,
    postgres_semantics,
    projection_aliases,
    size_guards,
    star_defaults,
    subquery_predicates,
)
from kyma.engine.storage import ObjectStore

PRUNED = 1024
"""Stage-1 answers kept (table, snapshot, predicate): a few hundred bytes per extent each."""
ANALYZE = "analyze"
PLANNED, KEPT, SHAPED = "planned", "kept", "shape"
"""The answer's ``plan`` stat: planned for it, kept from the same text, or its shape's."""
"""``explain=ANALYZE``: run the statement and answer its plan with what each part did."""


class SelectPlanner(ScanSetup):
    def __init__(
        self,
        catalog: Catalog,
        store: ObjectStore,
        fmt: SegmentFormat,
        federation: Federation | None = None,
        limits: QueryLimits | None = None,
        decoded_bytes: int = 0,
        relations: Relations | None = None,
    ) -> None:
        """``decoded_bytes``: how much decoded column data to keep for later statements
        (``_decoded``; 0: none). ``relations``: Postgres' catalog relations and functions
        (``relations``), None: kyma tables only."""
        self.catalog = catalog
        self.relations = relations
        self._functions = list(relations.functions()) if relations is not None else []
        self.store = store
        self.format = fmt
        self.federation = federation
        self.limits = limits
        self._pruned: Recent[tuple[int, list[ExtentRef]]] = Recent(PRUNED)
        self._plans: Recent[Plan] = Recent(STATEMENTS)
        self._templates: Recent[Template | Plan] = Recent(STATEMENTS)
        """By shape: its template, or the plan of a statement of a shape that has none."""
        self._sessions = Sessions()
        pool = limits.memory_bytes if limits is not None else 0
        self.decoded = DecodedColumns(decoded_bytes, pool)
        self.keep_up: Callable[[ViewInfo], None] | None = None
        """Brings a materialized view's rows up to date before a query reads them."""
        self.import_dirs: tuple[Path, ...] = ()
        """The folders ``read_parquet``, ``read_csv`` and ``read_ndjson`` may read."""

    def run(
        self,
        stmt: exp.Expression,
        *,
        snapshot: int | None,
        explain: bool | str,
        pruning: bool = True,
        pushdown: bool = True,
        text: str | None = None,
        visible: Callable[[str], bool] | None = None,
        sink: Sink | None = None,
        stream: bool = False,
        rows: str | None = None,
        shape: Shape | None = None,
    ) -> QueryResult:
        """The answer of a query (its scans hold their folders of links while it runs).

        ``text``: the statement as written, when ``stmt`` is the parse cache's (kept as it
        is: planned as a copy); its plan is kept by the text (``_plans``). ``visible``:
        whether the caller may read a table, which catalog relations list (None: all).
        ``sink``: takes the answer's batches as they are computed instead (the result limits
        do not apply: nothing is kept); the result has no rows and its ``rowcount``.
        ``stream``: answer the first batch and the rest as ``live`` rows, computed as they
        are read (a query DataFusion answers; others answer whole). ``rows``: a table whose
        scan adds ``deletes.ROW_COLUMNS`` (a DELETE's, not kept). ``shape``: the shape of
        ``text`` (``_shapes``), whose plan serves every statement of the shape; ``stmt`` may
        then be another statement's of the shape (``text`` is parsed if it must be planned)."""
        with counting_reads() as reads, contextlib.ExitStack() as stack:
            folders = stack.enter_context(_native.folders.lease())
            stack.enter_context(_contexts.contexts.lease())
            out = Out(sink, stream)
            if shape is not None and text is not None and snapshot is None and not explain:
                planned = partial(self._by_shape, shape, text, pruning, pushdown)
                result = planned(visible, out, folders)
            elif shape is not None and text is not None:  # ``stmt`` may be another text's
                result = self._planned(
                    parse(text),
                    snapshot,
                    explain,
                    pruning,
                    pushdown,
                    None,
                    visible,
                    out,
                    folders,
                    rows,
                )
            else:
                result = self._planned(
                    stmt, snapshot, explain, pruning, pushdown, text, visible, out, folders, rows
                )
            if "plan" in result.stats:  # a query kyma planned: how often it asked the catalog
                result.stats["catalog_reads"] = reads[0]
            if isinstance(result.live, LiveRows):  # the folders stay leased while it runs
                result.live.lease(stack.pop_all().close)
            return result

    def _planned(
        self,
        stmt: exp.Expression,
        snapshot: int | None,
        explain: bool | str,
        pruning: bool,
        pushdown: bool,
        text: str | None,
        visible: Callable[[str], bool] | None,
        out: Out,
        folders: _native.Folders,
        rows: str | None,
    ) -> QueryResult:
        started = time.perf_counter()
        if text is None:
            return self._run(
                stmt, snapshot, explain, pruning, pushdown, folders, visible, None, out, rows
            )
        key = (text, pruning, pushdown)
        plan = self._plans.get(key) if snapshot is None and not explain else None
        if plan is not None:
            found = self.catalog.get_tables(plan.lookups)
            if plan.holds(found):
                return self._answer(plan, started, folders, visible, out=out, key=key, how=KEPT)
        cached = key if snapshot is None and not explain else None
        copy = stmt.copy()
        return self._run(
            copy, snapshot, explain, pruning, pushdown, folders, visible, cached, out, rows
        )

    def _by_shape(
        self,
        shape: Shape,
        text: str,
        pruning: bool,
        pushdown: bool,
        visible: Callable[[str], bool] | None,
        out: Out,
        folders: _native.Folders,
    ) -> QueryResult:
        """A query by its shape's template (``_templates``), made from this statement the
        first time; a shape without one is planned by its text."""
        started = time.perf_counter()
        key = (shape.key, pruning, pushdown)
        by_text = (text, pruning, pushdown)
        kept = self._templates.get(key)
        base = kept.plan if isinstance(kept, Template) else kept
        if base is not None and base.holds(self.catalog.get_tables(base.lookups)):
            if isinstance(kept, Template):
                plan = kept.bind(shape)
                session = _by_predicates(key, plan)
                return self._answer(
                    plan, started, folders, visible, out=out, key=session, how=SHAPED
                )
            plan = self._plans.get(by_text)  # a shape without a template: by its text
            if plan is not None and plan.holds(self.catalog.get_tables(plan.lookups)):
                return self._answer(plan, started, folders, visible, out=out, key=by_text, how=KEPT)
            return self._run(
                parse(text), None, False, pruning, pushdown, folders, visible, by_text, out
            )
        made = self._plan(parse(text), None, False, pruning, pushdown, visible, by_text)
        if isinstance(made, QueryResult):
            return sunk(made, out.sink)
        own, ctx, scans, cacheable = made
        if cacheable is not None:
            self._keep(by_text, own)
            self._templates.put(key, self._template(shape, own, pruning, pushdown, visible))
        session = _by_predicates(key, own) if cacheable is not None else None
        return self._answer(own, started, folders, visible, ctx, scans, False, out, session)

    def _template(
        self,
        shape: Shape,
        own: Plan,
        pruning: bool,
        pushdown: bool,
        visible: Callable[[str], bool] | None,
    ) -> Template | Plan:
        """The shape's template, or ``own`` (a plan that says the shape has none)."""
        stand_ins = sentinels(shape.classes)
        texts = [sql_text(c, v) for c, v in zip(shape.classes, stand_ins, strict=True)]
        try:
            made = self._plan(parse(shape.render(texts)), None, False, pruning, pushdown, visible)
        except (KymaError, ValueError):
            return own  # a literal the plan reads: a stand-in for it does not even plan
        if isinstance(made, QueryResult):
            return own
        return derive(made[0], own, shape, stand_ins) or own

    def _run(
        self,
        stmt: exp.Expression,
        snapshot: int | None,
        explain: bool | str,
        pruning: bool,
        pushdown: bool,
        folders: _native.Folders,
        visible: Callable[[str], bool] | None,
        key: Hashable | None = None,
        out: Out = WHOLE,
        rows: str | None = None,
    ) -> QueryResult:
        """Plan ``stmt`` and answer it; the plan is kept under ``key`` (None: not kept) when
        it reads kyma tables only (connector tables change outside the catalog)."""
        started = time.perf_counter()
        made = self._plan(stmt, snapshot, explain, pruning, pushdown, visible, key, rows)
        if isinstance(made, QueryResult):
            return sunk(made, out.sink)
        plan, ctx, scans, key = made
        self._keep(key, plan)
        return self._answer(plan, started, folders, visible, ctx, scans, explain, out, key)

    def _plan(
        self,
        stmt: exp.Expression,
        snapshot: int | None,
        explain: bool | str,
        pruning: bool,
        pushdown: bool,
        visible: Callable[[str], bool] | None,
        key: Hashable | None = None,
        rows: str | None = None,
    ) -> tuple[Plan, SessionContext, list[FederatedScan], Hashable | None] | QueryResult:
        """``stmt`` planned: the plan, its session (the federated answers and imported files
        registered), its federated scans and ``key`` (None when the plan may not be kept);
        or the whole answer, when a connector answers the statement itself."""
        started = time.perf_counter()
        names = None if explain else output_names(stmt)
        stmt = order_by_names.rule(stmt, names)
        stmt = output_aliases.rule(stmt)  # after the names: they are Postgres's
        looked: dict[str, TableInfo | None] = {}
        if self._expand_views(stmt, looked, visible):  # first: a view may read pg_class
            key = None  # a view's plan is made each time: its query may be replaced
        stmt, relations = self._resolve_relations(stmt, looked)
        scans: list[FederatedScan] = []
        if references_sources(stmt):
            key = None
        if self.federation is not None:
            stmt = self.federation.resolve_synced(stmt)  # type: ignore[assignment]
        if references_sources(stmt):
            if self.federation is None:
                raise UnsupportedStatementError("this kyma has no connectors to federate")
            plan = self.federation.plan(
                stmt,
                self._local_schemas(stmt),
                pushdown=pushdown,  # type: ignore[arg-type]
            )
            stmt, scans = plan.statement, plan.scans
            if plan.whole is not None and not explain:
                table = plan.whole.fetch()
                summary = {"elapsed_ms": ms_since(started)}
                return QueryResult(table, "SELECT", summary, [plan.whole.summary()])
        sources = self._resolve(stmt, snapshot, {scan.name for scan in scans}, looked)
        for source in sources.values():
            source.rows = source.info.name == rows
        imports = _imports.resolve(stmt, self.import_dirs)
        if imports:
            key = None  # the files may change
        tables = fingerprint(list(looked), looked)  # type: ignore[arg-type]
        stmt = subquery_predicates.rule(star_defaults.rule(stmt, declared(sources)))
        infos = {name: source.info for name, source in sources.items()}
        exact = None if explain or scans or imports or not pruning else _statistics.of(stmt, infos)
        stmt = evolved.rule(stmt, [source.info.columns for source in sources.values()])
        fetched: dict[str, dict[str, str]] = {}
        answers = []
        for scan in scans:
            answer = scan.fetch()
            answers.append((scan.name, answer))
            fetched[f'"{scan.name}"'] = {f.name: arrow_sql_type(f.type) for f in answer.schema}
        files = {
            f'"{i.name}"': {f.name: arrow_sql_type(f.type) for f in i.register(SessionContext())}
            for i in imports  # their columns, to plan; registered again in the session below
        }
        columns = {**fetched, **files}  # and the catalog relations', to resolve names by tables
        for name in relations if sources else ():
            built = self._relation(name, list)  # its columns (its rows: _answer)
            columns[f'"{name}"'] = {f.name: arrow_sql_type(f.type) for f in built.schema}
        self._analyze(stmt, sources, columns, pruning=pruning)
        schemas = {**self._session_schemas(sources), **fetched, **files}
        stmt = correlated.rule(stmt, schemas)
        stmt = numeric_input.rule(numeric_literals.rule(stmt), not_text(sources, fetched))
        stmt = postgres_semantics.rule(stmt, schemas, federated=bool(fetched))
        stmt = has_token.rule(stmt)  # after ``_analyze``: stage 3 prunes by the call
        if self.limits is not None and self.limits.memory_bytes:
            stmt = size_guards.rule(stmt)
        stmt = projection_aliases.rule(derived_aliases.rule(stmt))
        ordered = pruning and not (explain or scans or relations or len(sources) != 1)
        time_order = _time_order.of(stmt, set(sources)) if ordered else None
        late = time_order is not None or filters_fewer_columns(stmt, sources)
        ctx = self._session(late=late)
        for name, answer in answers:
            ctx.register_record_batches(name, [answer.to_batches() or [empty_batch(answer)]])
        for i in imports:
            i.register(ctx)
        # Quote every identifier: DataFusion reserves words Postgres does not (e.g. TOP).
        # Function names in lower case: DataFusion finds table functions by exact name.
        sql = stmt.sql(dialect="postgres", identify=True, normalize_functions="lower")
        planned = Plan(
            tables,
            sources,
            sql,
            names,
            tuple(sorted(relations)),
            udfs.called(sql),
            statistics=exact,
            time_order=time_order,
            late=late,
            steady=steady(stmt),
        )
        return planned, ctx, scans, key

    def _keep(self, key: Hashable | None, plan: Plan) -> None:
        if key is not None:
            self._plans.put(key, plan)

    def _answer(
        self,
        plan: Plan,
        started: float,
        folders: _native.Folders,
        visible: Callable[[str], bool] | None,
        ctx: SessionContext | None = None,
        scans: Sequence[FederatedScan] = (),
        explain: bool | str = False,
        out: Out = WHOLE,
        key: Hashable | None = None,
        how: str = PLANNED,
    ) -> QueryResult:
        """Run a plan: stage 1 and the scans of each table, the catalog relations it reads
        built for this caller, then DataFusion (its answer to ``sink``, when given).
        ``key``: the plan's in the plan cache (None: not kept), under which its session is
        kept for the next run when it is small (``_prepared``). ``how``: whether the plan
        was made for this statement or kept (the answer's ``plan`` stat)."""
        if plan.statistics is not None:
            found = self._from_statistics(plan.statistics, plan, started, how)
            if found is not None:
                return sunk(found, out.sink)
        order = plan.time_order if out.sink is None and not explain else None
        reusable = key is not None and out.sink is None and not (explain or scans)
        reusable = reusable and order is None and not plan.relations
        prepared = self._sessions.take(key, plan.tables) if reusable else None
        windows: dict[str, Window] = {}
        listed = False
        frame: DataFrame | None = None
        physical = None
        if prepared is not None:
            ctx = prepared.ctx
            frame = prepared.frame_of(plan.sql) or planned(ctx, plan.sql, self.limits)
            physical = prepared.physical_of(plan.sql) if plan.steady else None
            stats = prepared.stats
        else:
            ctx = ctx if ctx is not None else self._session(plan.functions, plan.late)
            self._register_relations(ctx, plan.relations, visible)
            if order is not None:
                windows[order.table] = self._probe(plan, order, folders)
            stats = {}
            for name, source in plan.sources.items():
                stats[name], read = self._register(ctx, name, source, folders, windows.get(name))
                listed = listed or read
        total = ScanStats()
        for table_stats in stats.values():
            total.add(table_stats)
        _running.report(**asdict(total))  # the cascade is done: what the scan will read
        sink = out.sink
        if sink is not None and not explain:
            assert ctx is not None
            schema, batches = stream_datafusion(ctx, plan.sql, self.limits)
            answer = stored(renamed(plain(schema.empty_table()), plan.names).schema)
            rows = sink(answer, (as_answer(answer, b) for b in batches))
            summary = {**asdict(total), "elapsed_ms": ms_since(started)}
            return QueryResult(pa.table({}), "SELECT", summary, [], rowcount=rows)
        if reusable and frame is None and not listed and total.bytes_read <= MAX_BYTES:
            assert ctx is not None
            frame = planned(ctx, plan.sql, self.limits)
        live = None
        # A top-k's few rows come whole, as do a kept plan's (a small table in memory).
        if out.stream and not explain and order is None and physical is None:
            found, schema = open_stream(ctx, frame or plan.sql, self.limits)  # type: ignore[arg-type]
            shape = partial(shaped, names=plan.names)
            live = LiveRows(found, shape(schema.empty_table()).schema, shape, self.limits)
            del found  # the stream is the live rows': closing them stops it
            table = live.first()
        elif physical is not None and frame is not None:
            answer = run_physical(ctx, physical, frame.schema(), self.limits)  # type: ignore[arg-type]
            table = renamed(plain(answer), plan.names)
        elif frame is not None:
            table = renamed(plain(run_frame(frame, self.limits)), plan.names)
        else:
            assert ctx is not None
            table = plain(run_datafusion(ctx, plan.sql, explain=explain, limits=self.limits))
            if order is not None and table.num_rows < windows[order.table].expected(order):
                # Fewer rows in the window than the probe saw: a WHERE that moved between
                # the passes (now()). Answered again over every row.
                unbounded = replace(plan, time_order=None)
                again = (unbounded, started, folders, visible, None, scans, explain, out)
                return self._answer(*again, how=how)
            table = renamed(table, plan.names)  # names is None for EXPLAIN
        if frame is not None and (live is None or live.done):  # its session is free again
            kept = frame if plan.steady else None
            if kept is not None and physical is None:
                physical = rerunnable(kept)
            _contexts.keep(ctx)
            prepared = Prepared(plan.tables, ctx, kept, stats, plan.sql, physical)
            self._sessions.keep(key, prepared)
        summary = {
            **asdict(total),
            "elapsed_ms": ms_since(started),
            "plan": how,
            "tables": {name: asdict(s) for name, s in stats.items()},
        }
        pushdown_summary = [scan.summary() for scan in scans]
        if explain:
            table = explained(stats, pushdown_summary, table)
        if explain == ANALYZE:
            table = with_elapsed(table, summary["elapsed_ms"])
        status = "EXPLAIN" if explain else "SELECT"
        if live is not None and not live.done:
            return QueryResult(table, status, summary, pushdown_summary, live=live)
        return QueryResult(table, status, summary, pushdown_summary)


def _by_predicates(key: Hashable, plan: Plan) -> Hashable:
    """A shape's session key: its statements share a session only over the same extents."""
    return (key, tuple((name, source.predicate) for name, source in plan.sources.items()))
