"""SELECT: resolve kyma tables, run the pruning cascade per table, execute on DataFusion."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import asdict
from functools import partial

import pyarrow as pa
import sqlglot.errors
from datafusion import SessionContext
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from kyma.engine import deletes
from kyma.engine.catalog import Catalog, ExtentRef, TableInfo, ViewInfo
from kyma.engine.errors import NotFoundError, PermissionDeniedError, UnsupportedStatementError
from kyma.engine.format import SegmentFormat
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.query import (
    _jsonb_columns,
    _native,
    _path_columns,
    _relation_refs,
    _running,
    _views,
    udfs,
)
from kyma.engine.query._access import federated_tables
from kyma.engine.query._answers import WHOLE, Out, Sink, as_answer, empty_batch, shaped, sunk
from kyma.engine.query._datafusion import open_stream, run_datafusion, stream_datafusion
from kyma.engine.query._decoded import DecodedColumns, plain
from kyma.engine.query._estimate import GUARDS, register_guard
from kyma.engine.query._explain import explained, with_elapsed
from kyma.engine.query._limits import (
    QueryLimits,
    cancelled_with_statement,
    session_context,
)
from kyma.engine.query._live import LiveRows
from kyma.engine.query._lower import lower
from kyma.engine.query._output_names import output_names, renamed
from kyma.engine.query._plans import STATEMENTS, Plan, fingerprint
from kyma.engine.query._recent import Recent
from kyma.engine.query._result import QueryResult
from kyma.engine.query._scan import ScanStats, TableScan
from kyma.engine.query._sources import Source, counted_table, declared, not_text
from kyma.engine.query._sql_types import arrow_sql_type, sql_type
from kyma.engine.query._syntax import unresolved
from kyma.engine.query.durations import ms_since
from kyma.engine.query.federation import FederatedScan, Federation, references_sources
from kyma.engine.query.relations import Relations, relation_of, split
from kyma.engine.query.rewrite import (
    correlated,
    current_state,
    derived_aliases,
    evolved,
    numeric_input,
    numeric_literals,
    output_aliases,
    postgres_semantics,
    projection_aliases,
    size_guards,
    star_defaults,
    subquery_predicates,
)
from kyma.engine.query.rewrite.time_travel import split_versioned
from kyma.engine.storage import ObjectStore

PARTITIONS = max(2, os.cpu_count() or 2)
PRUNED = 1024
"""Stage-1 answers kept (table, snapshot, predicate): a few hundred bytes per extent each."""
ANALYZE = "analyze"
"""``explain=ANALYZE``: run the statement and answer its plan with what each part did."""


class SelectPlanner:
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
        pool = limits.memory_bytes if limits is not None else 0
        self.decoded = DecodedColumns(decoded_bytes, pool)

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
    ) -> QueryResult:
        """The answer of a query (its scans hold their folders of links while it runs).

        ``text``: the statement as written, when ``stmt`` is the parse cache's (kept as it
        is: planned as a copy); its plan is kept by the text (``_plans``). ``visible``:
        whether the caller may read a table, which catalog relations list (None: all).
        ``sink``: takes the answer's batches as they are computed instead (the result limits
        do not apply: nothing is kept); the result has no rows and its ``rowcount``.
        ``stream``: answer the first batch and the rest as ``live`` rows, computed as they
        are read (a query DataFusion answers; others answer whole). ``rows``: a table whose
        scan adds ``deletes.ROW_COLUMNS`` (a DELETE's, not kept)."""
        with contextlib.ExitStack() as stack:
            folders = stack.enter_context(_native.folders.lease())
            out = Out(sink, stream)
            result = self._planned(
                stmt, snapshot, explain, pruning, pushdown, text, visible, out, folders, rows
            )
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
                return self._answer(plan, started, folders, visible, out=out)
        cached = key if snapshot is None and not explain else None
        copy = stmt.copy()
        return self._run(
            copy, snapshot, explain, pruning, pushdown, folders, visible, cached, out, rows
        )

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
        names = None if explain else output_names(stmt)
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
                return sunk(QueryResult(table, "SELECT", summary, [plan.whole.summary()]), out.sink)
        sources = self._resolve(stmt, snapshot, {scan.name for scan in scans}, looked)
        for source in sources.values():
            source.rows = source.info.name == rows
        tables = fingerprint(list(looked), looked)  # type: ignore[arg-type]
        stmt = subquery_predicates.rule(star_defaults.rule(stmt, declared(sources)))
        counted = None if explain or scans else counted_table(stmt, sources)
        if counted is not None:
            planned = Plan(tables, sources, "", names, counted)
            self._keep(key, planned)
            return self._answer(planned, started, folders, visible, out=out)
        stmt = evolved.rule(stmt, [source.info.columns for source in sources.values()])
        ctx = self._session()
        fetched: dict[str, dict[str, str]] = {}
        for scan in scans:
            answer = scan.fetch()
            ctx.register_record_batches(scan.name, [answer.to_batches() or [empty_batch(answer)]])
            fetched[f'"{scan.name}"'] = {f.name: arrow_sql_type(f.type) for f in answer.schema}
        columns = dict(fetched)  # and the catalog relations', to resolve names beside tables
        for name in relations if sources else ():
            built = self._relation(name, list)  # its columns (its rows: _answer)
            columns[f'"{name}"'] = {f.name: arrow_sql_type(f.type) for f in built.schema}
        self._analyze(stmt, sources, columns, pruning=pruning)
        schemas = {**self._session_schemas(sources), **fetched}
        stmt = correlated.rule(stmt, schemas)
        stmt = numeric_input.rule(numeric_literals.rule(stmt), not_text(sources, fetched))
        stmt = postgres_semantics.rule(stmt, schemas, federated=bool(fetched))
        if self.limits is not None and self.limits.memory_bytes:
            stmt = size_guards.rule(stmt)
        stmt = projection_aliases.rule(derived_aliases.rule(stmt))
        # Quote every identifier: DataFusion reserves words Postgres does not (e.g. TOP).
        # Function names in lower case: DataFusion finds table functions by exact name.
        sql = stmt.sql(dialect="postgres", identify=True, normalize_functions="lower")
        relations_read = tuple(sorted(relations))
        planned = Plan(tables, sources, sql, names, None, relations_read, udfs.called(sql))
        self._keep(key, planned)
        return self._answer(planned, started, folders, visible, ctx, scans, explain, out)

    def _resolve_relations(
        self, stmt: exp.Expression, looked: dict[str, TableInfo | None]
    ) -> tuple[exp.Expression, set[str]]:
        """``stmt`` with its references to catalog relations renamed to their session names
        and the relations' rules applied; the session names it still reads. ``looked`` gets
        the bare names looked up as kyma tables (a table of that name is the table)."""
        if self.relations is None:
            return stmt, set()
        refs = _relation_refs.references(stmt, self.relations)
        bare = _relation_refs.bare_names(refs)
        if bare:
            found = self.catalog.get_tables(bare)
            looked.update({name: found.get(name) for name in bare})
        _relation_refs.resolve(refs, self.relations, lambda name: looked.get(name) is not None)
        stmt = self.relations.rewrite(stmt)
        named = {t.name for t in stmt.find_all(exp.Table) if relation_of(t) is not None}
        return stmt, named

    def _expand_views(
        self,
        stmt: exp.Expression,
        looked: dict[str, TableInfo | None],
        visible: Callable[[str], bool] | None,
    ) -> bool:
        """Replace the views ``stmt`` names by their queries (in place); whether it named any.
        Views are looked up only under names no table has (``looked`` gets the tables read);
        a table or connector table a view reads that the caller may not read is refused."""

        def views_of(names: set[str]) -> dict[str, ViewInfo]:
            new = names - set(looked)
            if new:
                found = self.catalog.get_tables(new)
                looked.update({name: found.get(name) for name in new})
            missing = {name for name in names if looked.get(name) is None}
            return self.catalog.get_views(missing) if missing else {}

        _, views = _views.expand(stmt, views_of, self.local_tables)
        if views and visible is not None:
            read = {split_versioned(raw)[0] for raw, _ in self.local_tables(stmt)}
            for table in sorted(read | federated_tables(stmt)):
                if not visible(table):
                    raise PermissionDeniedError(
                        f"view {sorted(views)[0]!r} reads table {table!r}, which this token"
                        " may not read",
                        scope="read",
                        table=table,
                    )
        return bool(views)

    def _relation(self, name: str, tables: Callable[[], list[TableInfo | ViewInfo]]) -> pa.Table:
        found = split(name)
        assert found is not None and self.relations is not None
        return self.relations.build(*found, tables)

    def _register_relations(
        self, ctx: SessionContext, names: Sequence[str], visible: Callable[[str], bool] | None
    ) -> None:
        """The rows of each catalog relation a plan reads, over the tables the caller may
        read (listed once, and only if a relation needs them)."""
        listed: list[list[TableInfo | ViewInfo]] = []

        def tables() -> list[TableInfo | ViewInfo]:
            if not listed:
                every = [*self.catalog.list_tables(), *self.catalog.list_views()]
                listed.append([i for i in every if visible is None or visible(i.name)])
            return listed[0]

        for name in names:
            built = self._relation(name, tables)
            ctx.register_record_batches(name, [built.to_batches() or [empty_batch(built)]])

    def _keep(self, key: Hashable | None, plan: Plan) -> None:
        if key is not None:
            self._plans.put(key, plan)

    def _session(self, called: Collection[str] | None = None) -> SessionContext:
        """A DataFusion session with kyma's functions and the statement's memory pool:
        those a planned statement ``called`` (None: every one, to plan with)."""
        ctx = session_context(self.limits)
        udfs.register(ctx, called=called)
        udfs.register(ctx, self._functions, called)
        guards = called is None or not GUARDS.isdisjoint(called)
        if self.limits is not None and self.limits.memory_bytes and guards:
            register_guard(ctx, self.limits.memory_bytes)
        return ctx

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
    ) -> QueryResult:
        """Run a plan: stage 1 and the scans of each table, the catalog relations it reads
        built for this caller, then DataFusion (its answer to ``sink``, when given)."""
        if plan.counted is not None:
            source = plan.sources[plan.counted]
            return sunk(self._count(plan.counted, source, plan.names, started), out.sink)
        ctx = ctx if ctx is not None else self._session(plan.functions)
        self._register_relations(ctx, plan.relations, visible)
        stats: dict[str, ScanStats] = {}
        for name, source in plan.sources.items():
            stats[name] = self._register(ctx, name, source, folders)
        total = ScanStats()
        for table_stats in stats.values():
            total.add(table_stats)
        _running.report(**asdict(total))  # the cascade is done: what the scan will read
        sink = out.sink
        if sink is not None and not explain:
            schema, batches = stream_datafusion(ctx, plan.sql, self.limits)
            empty = renamed(plain(schema.empty_table()), plan.names)
            rows = sink(empty.schema, (as_answer(empty.schema, b) for b in batches))
            summary = {**asdict(total), "elapsed_ms": ms_since(started)}
            return QueryResult(pa.table({}), "SELECT", summary, [], rowcount=rows)
        live = None
        if out.stream and not explain:
            found, schema = open_stream(ctx, plan.sql, self.limits)
            shape = partial(shaped, names=plan.names)
            live = LiveRows(found, shape(schema.empty_table()).schema, shape, self.limits)
            del found  # the stream is the live rows': closing them stops it
            table = live.first()
        else:
            table = plain(run_datafusion(ctx, plan.sql, explain=explain, limits=self.limits))
            table = renamed(table, plan.names)  # names is None for EXPLAIN
        summary = {
            **asdict(total),
            "elapsed_ms": ms_since(started),
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

    def _count(
        self, name: str, source: Source, names: list[str] | None, started: float
    ) -> QueryResult:
        """``SELECT count(*) FROM t``: the row counts of the catalog's extents, nothing read."""
        total, extents = self._stage1(source, None)
        stats = ScanStats(total, len(extents), sum(e.block_count for e in extents))
        table = pa.table({"count": pa.array([sum(e.live_rows for e in extents)], pa.int64())})
        summary = {
            **asdict(stats),
            "elapsed_ms": ms_since(started),
            "tables": {name: asdict(stats)},
        }
        return QueryResult(renamed(table, names), "SELECT", summary, [])

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

    def local_tables(
        self, stmt: exp.Expression, skip: Collection[str] = ()
    ) -> list[tuple[str, exp.Table]]:
        """(name as written, node) for each reference to a kyma table (not a CTE, source or
        catalog relation; a bare catalog relation name is here: it may be a kyma table)."""
        ctes = {cte.alias_or_name for cte in stmt.find_all(exp.CTE)}
        schemas = self.relations.schemas if self.relations is not None else frozenset()
        found = []
        for table in list(stmt.find_all(exp.Table)):
            ident = table.this
            if table.args.get("catalog") or not isinstance(ident, exp.Identifier):
                continue
            if relation_of(table) is not None or table.text("db").lower() in schemas:
                continue
            if table.args.get("db"):
                where = table.sql("postgres")
                raise UnsupportedStatementError(
                    f"{where!r}: name a source table as <connector>.<schema>.<table>"
                )
            raw = ident.name if ident.quoted else ident.name.lower()
            if raw not in ctes and raw not in skip:
                found.append((raw, table))
        return found

    def bare_relations(self, names: Collection[str]) -> set[str]:
        """The ``names`` (bare, as ``local_tables`` finds them) that name a catalog relation
        rather than a kyma table."""
        if self.relations is None:
            return set()
        candidates = {n for n in names if self.relations.relation(None, n)}
        return candidates - set(self.catalog.get_tables(candidates)) if candidates else set()

    def _resolve(
        self,
        stmt: exp.Expression,
        snapshot: int | None,
        skip: set[str],
        looked: dict[str, TableInfo | None],
    ) -> dict[str, Source]:
        """Find kyma table references; rename each to its session name ("logs" or "logs@42").
        The tables are read from the catalog together; ``looked`` gets every name looked up
        and what it found (None: no table)."""
        refs = self.local_tables(stmt, skip)
        wanted = {split_versioned(raw)[0] for raw, _ in refs} - set(looked)
        found = self.catalog.get_tables(wanted) if wanted else {}
        looked.update({name: found.get(name) for name in wanted})
        sources: dict[str, Source] = {}
        for raw, table in refs:
            name, at = split_versioned(raw)
            info, current = self._table_info(name, looked)
            at = at if at is not None else (snapshot if self._owns(info, snapshot) else None)
            session_name = info.name if at is None else f"{info.name}@{at}"
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
            table.set("this", exp.to_identifier(session_name, quoted=True))
            sources.setdefault(session_name, Source(info, at, [], set()))
            if current:  # a CDC change log read by name: its current state
                table.replace(current_state.view(table, table.alias_or_name, info.columns))
        if snapshot is not None and all(s.snapshot != snapshot for s in sources.values()):
            raise NotFoundError(f"no table in the query has snapshot {snapshot}")
        return sources

    def _table_info(self, name: str, looked: dict[str, TableInfo | None]) -> tuple[TableInfo, bool]:
        """A kyma table, and whether reading it by ``name`` means a CDC table's current state
        (a name the federation maps to the table's change log reads the log itself).
        ``looked``: tables already read by name (None: no table), and those read here."""
        if name not in looked:
            looked[name] = self.catalog.get_tables([name]).get(name)
        info = looked[name]
        if info is not None:
            return info, current_state.is_cdc(info.options)
        base = None if self.federation is None else self.federation.change_log_of(name)
        if base is None:
            info = self.catalog.get_table(name)  # its error: NotFoundError, or a bad name
            return info, current_state.is_cdc(info.options)
        if base not in looked:
            looked[base] = self.catalog.get_tables([base]).get(base)
        info = looked[base]
        if info is None:
            raise NotFoundError(f"table {base!r} does not exist")
        if not current_state.is_cdc(info.options):
            raise NotFoundError(f"table {name!r} does not exist") from None
        return info, False

    def _owns(self, info: TableInfo, snapshot: int | None) -> bool:
        return snapshot is not None and any(
            s.snapshot_id == snapshot for s in self.catalog.snapshots(info.name)
        )

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
        schema = {**self._session_schemas(sources), **fetched}
        calls = _path_columns.tag(stmt)
        typed = _jsonb_columns.tag(stmt)
        try:
            qualified = qualify(
                stmt.copy(), schema=schema, dialect="postgres", quote_identifiers=False
            )
        except sqlglot.errors.OptimizeError as e:
            tables = [t.name for t in stmt.find_all(exp.Table) if t.name in sources]
            columns = {name: {c.name for c in s.info.columns} for name, s in sources.items()}
            raise unresolved(str(e), lambda c: sum(c in columns[t] for t in tables)) from None
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
        self, ctx: SessionContext, name: str, source: Source, folders: _native.Folders
    ) -> ScanStats:
        fields = [c.to_arrow() for c in source.info.columns if c.name in source.columns]
        fields += [pa.field(p.name, pa.string()) for p in source.paths]
        if source.rows:
            fields += [pa.field(deletes.ROW_COLUMNS[0], pa.string())]
            fields += [pa.field(deletes.ROW_COLUMNS[1], pa.int64())]
        schema = pa.schema(fields or [source.info.columns[0].to_arrow()])
        scan = TableScan(schema, source.predicate, paths=source.paths, rows=source.rows)
        total, survivors = self._stage1(source, scan.predicate)
        scan.stats.extents_total = total
        scan.stats.extents_after_catalog = len(survivors)
        _native.register(
            ctx, name, scan, survivors, self.store, self.format, folders, PARTITIONS, self.decoded
        )
        return scan.stats
