"""QueryEngine: the entry point that runs one SQL statement."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
from sqlglot import exp
from sqlglot.errors import TokenError

from kyma.engine.catalog import Catalog
from kyma.engine.errors import (
    CursorNotFoundError,
    NotFoundError,
    NoTransactionError,
    QueryCancelledError,
    SqlError,
    StatementStoppedError,
    UnsupportedStatementError,
)
from kyma.engine.format import SegmentFormat
from kyma.engine.query import _ddl, _dml, _insert, _matviews, _paths, _truncate, _views
from kyma.engine.query._access import (
    ADMIN,
    QUERY_WORDS,
    READ,
    WRITE,
    Access,
    every_table,
    federated_tables,
    readable,
)
from kyma.engine.query._answers import Sink
from kyma.engine.query._complexity import check_plan_size, check_set_operations
from kyma.engine.query._estimate import check_functions
from kyma.engine.query._guard import check_in_lists, check_statement, too_deep
from kyma.engine.query._limits import Cancel, QueryGate, QueryLimits
from kyma.engine.query._live import LiveRows
from kyma.engine.query._parse import parse, table_name
from kyma.engine.query._plans import MAX_KEPT_TEXT, STATEMENTS, Parsed
from kyma.engine.query._quarantine import Quarantine
from kyma.engine.query._recent import Recent
from kyma.engine.query._result import QueryResult
from kyma.engine.query._running import Caller, RunningStatements, current_caller
from kyma.engine.query._select import ANALYZE, SelectPlanner
from kyma.engine.query._shapes import Shape, shape_of
from kyma.engine.query.dialect import (
    Cursor,
    Deallocate,
    ExecutePrepared,
    Explain,
    Kyma,
    KymaStatement,
    Notification,
    Prepare,
    Savepoint,
)
from kyma.engine.query.federation import Federation
from kyma.engine.query.relations import Relations
from kyma.engine.query.rewrite import schema_names
from kyma.engine.query.rewrite.time_travel import split_versioned
from kyma.engine.storage import ObjectStore

T = TypeVar("T")


class QueryEngine:
    def __init__(
        self,
        catalog: Catalog,
        store: ObjectStore,
        fmt: SegmentFormat,
        federation: Federation | None = None,
        statements: Sequence[Callable[[KymaStatement], QueryResult | None]] = (),
        limits: QueryLimits | None = None,
        writer: _insert.InsertWriter | None = None,
        decoded_bytes: int = 0,
        quarantine: Quarantine | None = None,
        relations: Relations | None = None,
        running: RunningStatements | None = None,
        import_dirs: Sequence[Path] = (),
    ) -> None:
        """``statements`` run kyma's own statement kinds (CREATE SOURCE…), as kyma's dialect
        parses them: each returns a result, or None when the statement is not its kind.
        ``limits`` (timeout, memory, concurrency, result size) apply to every statement; None:
        no limits.
        ``gate.listeners`` hear of every statement (its time, outcome and stats).
        ``writer`` commits INSERTs (the ingest write path); None: INSERT is refused.
        ``decoded_bytes``: decoded columns of extents kept for later statements (0: none).
        ``quarantine``: statements run with their fingerprint in its journal, and those that
        crashed the server are refused (None: no journal).
        ``relations``: Postgres' catalog relations and functions (``relations``); a query
        naming them takes the same path, limits and gate as any other.
        ``running``: the list of running statements (shared with ``relations``); None: a new one.
        ``import_dirs``: the folders ``read_parquet`` / ``read_csv`` / ``read_ndjson`` may
        read (none: they are refused)."""
        self.catalog = catalog
        self.writer = writer
        self.federation = federation
        self.statements = [*([federation.statement] if federation else []), *statements]
        self.planner = SelectPlanner(
            catalog, store, fmt, federation, limits, decoded_bytes, relations
        )
        self.gate = QueryGate(limits)
        self.running = running if running is not None else RunningStatements()
        self.relations = relations
        self._parsed: Recent[Parsed] = Recent(STATEMENTS)
        self._shaped: Recent[Parsed] = Recent(STATEMENTS)  # by shape: a text's own Parsed
        self.limits = limits or QueryLimits()  # the statement's shape is always bounded
        self.quarantine = quarantine
        self.matviews = _matviews.Matviews(
            catalog, writer, self._run_at, self._rows_of, self.planner.local_tables
        )
        self.planner.keep_up = self.matviews.catch_up
        self.planner.import_dirs = tuple(import_dirs)

    def _run_at(self, query: exp.Query, snapshot: int | None, sink: Sink) -> int:
        """A materialized view's query at a snapshot of its table, to ``sink`` (upkeep: the
        caller's reads were checked by the statement that needs it)."""
        check_functions(query, self.limits.memory_bytes)
        run = self.planner.run
        return run(query, snapshot=snapshot, explain=False, sink=sink).rowcount

    def _rows_of(self, query: exp.Query, at: int, table: str) -> pa.Table:
        return self.planner.run(query, snapshot=at, explain=False, rows=table).table

    def execute(
        self,
        sql: str,
        *,
        snapshot: int | None = None,
        pruning: bool = True,
        pushdown: bool = True,
        authorize: Callable[[Access], None] | None = None,
        cancel: Cancel | None = None,
        timeout: float = 0,
        caller: Caller | None = None,
        search_path: str | None = None,
        stream: bool = False,
    ) -> QueryResult:
        """Run one statement; SqlError / SchemaError / NotFoundError for user mistakes.

        ``snapshot`` reads the table that owns that snapshot id as of it (time travel).
        ``pruning=False`` scans every block (a diagnostic: answers must not change).
        ``pushdown=False`` pushes only projections to federated sources (a baseline).
        ``authorize`` is called with what the statement needs before anything runs, and
        raises to refuse it; SHOW TABLES lists the tables it lets the caller read. ``cancel``,
        set (an Event) or true (a callable, polled) while the statement runs, cancels it
        (QueryCancelledError). ``timeout``: a session's statement_timeout in seconds (0:
        none); the lower of it and the server's timeout cancels the statement. ``caller``
        names who sends it and from where, for the list of running statements (``running``),
        where its owner or an admin may stop it.
        ``search_path``: the session's setting (None: ``public``); a path without
        ``public`` finds no kyma table by an unqualified name, as in Postgres.
        ``stream``: a query DataFusion answers comes back with its first batch as ``table``
        and the rest as ``live`` rows, computed as they are fetched (each fetch runs as this
        statement does: listed, within the limits, cancellable); close them when done.
        """
        try:
            parsed = self._parse(sql)
            stmt = parsed.statement if isinstance(parsed, Parsed) else parsed
            if authorize is not None:  # every statement, cached or not
                needs = parsed.needs if isinstance(parsed, Parsed) else self._needs(stmt, sql)
                for need in needs:
                    authorize(need)
            if search_path is not None and not schema_names.searches_public(search_path):
                self._unqualified(stmt)
            visible = readable(authorize) if authorize is not None else None
            text, shape = None, None
            if isinstance(parsed, Parsed) and len(sql) <= MAX_KEPT_TEXT:
                self._parsed.put(sql, parsed)  # kept once authorized, and only if small
                text, shape = sql, parsed.shape
                if shape is not None and parsed.statement is stmt and shape.text == sql:
                    self._shaped.put(shape.key, parsed)

            def work() -> QueryResult:
                return self._execute(
                    stmt, snapshot, pruning, pushdown, visible, text, stream, shape
                )

            fp = self.quarantine.check(sql) if self.quarantine is not None else None
            caller = caller or Caller()
            result = self._guarded(sql, caller, fp, work, cancel, timeout)
            if isinstance(result.live, LiveRows):
                result.live.guard = partial(self._guarded, sql, caller, fp, heard=False)
            return result
        except RecursionError:
            raise too_deep() from None

    def _stream(
        self, pruning: bool, pushdown: bool, visible: Callable[[str], bool] | None
    ) -> _insert.Stream:
        """Runs a statement's query (an INSERT's, CREATE TABLE AS's, a view's to no rows),
        its answer streamed to a sink."""

        def stream(query: exp.Query, sink: Sink) -> int:
            check_functions(query, self.limits.memory_bytes)
            switches = {"pruning": pruning, "pushdown": pushdown}
            run = self.planner.run
            found = run(query, snapshot=None, explain=False, visible=visible, sink=sink, **switches)
            return found.rowcount

        return stream

    def _guarded(
        self,
        sql: str,
        caller: Caller,
        fp: str | None,
        work: Callable[[], T],
        cancel: Cancel | None,
        timeout: float,
        heard: bool = True,
    ) -> T:
        """``work`` as a statement: listed as running (``KILL QUERY`` stops it), in the
        quarantine's journal under ``fp`` (None: none) and through the gate's limits."""
        guarded = work
        if self.quarantine is not None and fp is not None:
            journal = self.quarantine

            def guarded() -> T:
                return journal.running(fp, work)

        with self.running.running(sql, caller) as statement:
            try:
                return self.gate.run(guarded, _either(statement.stop, cancel), timeout, heard)
            except QueryCancelledError:
                if statement.stopped_by is None:
                    raise
                raise StatementStoppedError(
                    f"canceling statement due to user request: {statement.stopped_by}"
                    f" stopped it (KILL QUERY '{statement.id}')"
                ) from None

    def _unqualified(self, stmt: exp.Expression | SqlError) -> None:
        """NotFoundError (42P01) for a kyma table a query names without its schema."""
        query = stmt.this if isinstance(stmt, Explain) else stmt
        if not isinstance(query, exp.Query):
            return
        for raw, table in self.planner.local_tables(query):
            if not table.meta.get(schema_names.QUALIFIED):
                raise NotFoundError(f'relation "{split_versioned(raw)[0]}" does not exist')

    def _parse(self, sql: str) -> Parsed | exp.Expression | SqlError:
        """A query as kept by its text (``_plans.Parsed``; shared: never changed), or any
        other statement parsed anew, or its SqlError (told once authorized)."""
        kept = self._parsed.get(sql)
        if kept is not None:
            return kept
        shape = shape_of(sql) if len(sql) <= MAX_KEPT_TEXT else None
        model = self._shaped.get(shape.key) if shape is not None else None
        if shape is not None and model is not None:  # the text's guards hold: same shape
            return replace(model, shape=shape)
        limits = self.limits
        check_statement(sql, limits.max_statement_bytes, limits.max_expression_depth)
        check_in_lists(sql, limits.max_in_list_values)
        check_set_operations(sql, limits.max_plan_relations)
        try:
            stmt = parse(sql)
        except SqlError as e:  # reported when the statement runs, after authorization
            return e
        check_plan_size(stmt, limits.max_plan_relations)
        if not isinstance(stmt, exp.Query):
            return stmt
        if shape is not None and self._acting(stmt) is not None:
            shape = None  # pg_terminate_backend(…): what it acts on is read from its literals
        return Parsed(stmt, tuple(self._needs(stmt, sql)), shape)

    def _execute(
        self,
        stmt: exp.Expression | SqlError,
        snapshot: int | None,
        pruning: bool,
        pushdown: bool,
        visible: Callable[[str], bool] | None,
        text: str | None = None,
        stream: bool = False,
        shape: Shape | None = None,
    ) -> QueryResult:
        """``text``: set when ``stmt`` is the parse cache's (planned as a copy); ``shape``:
        the text's, when it has one (``stmt`` may be another text's of the shape)."""
        if isinstance(stmt, SqlError):
            raise stmt
        explain: bool | str = False
        if isinstance(stmt, Explain):
            explain = ANALYZE if stmt.args.get("analyze") else True
            stmt = stmt.this
        acting = None if explain else self._acting(stmt)
        if acting is not None:
            return acting()
        if isinstance(stmt, exp.Query):
            check_functions(stmt, self.limits.memory_bytes)
            switches = {"pruning": pruning, "pushdown": pushdown}
            return self.planner.run(
                stmt,
                snapshot=snapshot,
                explain=explain,
                text=text,
                visible=visible,
                stream=stream,
                shape=shape,
                **switches,
            )
        if explain:
            raise UnsupportedStatementError("EXPLAIN applies to queries only")
        if isinstance(stmt, KymaStatement) and stmt.verb == "KILL":
            stopped = self.running.stop(stmt.name, current_caller())
            return QueryResult(pa.table({"id": [stopped.id]}), "KILL")
        if isinstance(stmt, KymaStatement) and (stmt.verb, stmt.noun) == ("SHOW", "PATHS"):
            planner = self.planner
            return _paths.show_paths(self.catalog, planner.store, planner.format, stmt)
        if isinstance(stmt, KymaStatement):
            for statement in self.statements:
                handled = statement(stmt)
                if handled is not None:
                    return handled
        stream = self._stream(pruning, pushdown, visible)
        if isinstance(stmt, exp.Create) and _matviews.is_materialized(stmt):
            return self.matviews.create(stmt)
        if isinstance(stmt, exp.Refresh):
            return self.matviews.refresh(stmt)
        if isinstance(stmt, exp.Insert):
            return _insert.run(stmt, self.catalog, self.writer, stream)
        if isinstance(stmt, exp.Create) and _views.is_view(stmt):

            def describe(query: exp.Expression) -> pa.Schema:
                assert isinstance(query, exp.Query)
                found: list[pa.Schema] = []

                def keep(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
                    found.append(schema)
                    return sum(b.num_rows for b in batches)

                stream(query.limit(0), keep)
                return found[0]

            return _views.create_view(self.catalog, stmt, describe, self.planner.local_tables)
        if isinstance(stmt, exp.Create) and isinstance(stmt.expression, exp.Query):
            return _insert.create_table_as(stmt, self.catalog, self.writer, stream)
        if isinstance(stmt, (exp.Delete, exp.Update)):

            def rows_of(query: exp.Query, at: int, table: str) -> pa.Table:
                check_functions(query, self.limits.memory_bytes)
                run = self.planner.run
                return run(query, snapshot=at, explain=False, visible=visible, rows=table).table

            if isinstance(stmt, exp.Delete):
                return _dml.delete(stmt, self.catalog, rows_of)
            return _dml.update(stmt, self.catalog, rows_of, self.writer)
        if isinstance(stmt, exp.Create):
            return _ddl.create_table(self.catalog, stmt)
        if isinstance(stmt, exp.Alter):
            return _ddl.alter_table(self.catalog, stmt)
        if isinstance(stmt, exp.Drop) and _views.is_view(stmt):
            return _views.drop_view(self.catalog, stmt)
        if isinstance(stmt, exp.Drop):
            return _ddl.drop_table(self.catalog, stmt)
        if isinstance(stmt, exp.TruncateTable):
            return _truncate.run(stmt, self.catalog)
        if isinstance(stmt, exp.Describe):
            return self._describe(stmt)
        if _ddl.is_show_tables(stmt):
            return _ddl.show_tables(self.catalog, visible)
        _refuse_session_statement(stmt)
        raise UnsupportedStatementError(f"unsupported statement: {_kind(stmt)}")

    def _acting(self, stmt: exp.Expression) -> Callable[[], QueryResult] | None:
        """What runs a query the relations act on (``SELECT pg_cancel_backend(12)``)."""
        return self.relations.statement(stmt) if self.relations is not None else None

    def _describe(self, stmt: exp.Describe) -> QueryResult:
        """A kyma table, or ``connector.schema.table`` through its connector."""
        target = stmt.this
        if _names_a_source(target):
            if self.federation is None:
                raise NotFoundError(f"no connector named {target.catalog!r}")
            return self.federation.describe_table(target.catalog, target.db, target.name)
        return _ddl.describe(self.catalog, stmt)

    def _needs(self, stmt: exp.Expression | SqlError, sql: str) -> list[Access]:
        """Every check ``stmt`` must pass: an INSERT's write and its SELECT's reads."""
        if isinstance(stmt, exp.Insert):
            return _insert.access(stmt, self.access)
        if isinstance(stmt, exp.TruncateTable):
            return [_truncate.access(stmt)]
        if isinstance(stmt, exp.Create) and isinstance(stmt.expression, exp.Query):
            return [Access(ADMIN), self.access(stmt.expression)]  # and what its query reads
        if isinstance(stmt, KymaStatement) and stmt.verb == "KILL":
            return []  # anyone may stop their own statements; ``running.stop`` checks whose
        if isinstance(stmt, exp.Expression) and self._acting(stmt) is not None:
            return []  # pg_cancel_backend(…): it checks whose backend it is
        needs = self.access(stmt) if isinstance(stmt, exp.Expression) else _unparsed(sql)
        return [needs] if needs is not None else []

    def access(self, stmt: exp.Expression) -> Access:
        """What running ``stmt`` (parsed and rewritten) needs: READ and the tables for queries
        and DESCRIBE; READ for SHOW TABLES (it lists what the caller may read), READ of every
        table for the other SHOWs; ADMIN for everything else. Tables are found as the planner
        finds them."""
        if isinstance(stmt, KymaStatement) and (stmt.verb, stmt.noun) == ("SHOW", "PATHS"):
            return Access(READ, frozenset({_paths.target(stmt)[0]}))
        if isinstance(stmt, KymaStatement) and stmt.verb == "SHOW":
            return every_table()
        if isinstance(stmt, exp.Command) and stmt.name.upper() == "SHOW":
            words = stmt.text("expression").upper().split()
            return Access(READ) if words[:1] == ["TABLES"] else every_table()
        if isinstance(stmt, Explain):
            stmt = stmt.this
        if isinstance(stmt, _SESSION_STATEMENTS):
            return Access(READ)  # refused for anyone who may query, naming the statement
        if isinstance(stmt, exp.Query):
            local = {split_versioned(raw)[0] for raw, _ in self.planner.local_tables(stmt)}
            local -= self.planner.bare_relations(local)  # pg_class: a catalog relation
            return Access(READ, frozenset(local | federated_tables(stmt)))
        if isinstance(stmt, exp.Describe):
            if _names_a_source(stmt.this):
                return Access(READ, frozenset(federated_tables(stmt)))
            return Access(READ, frozenset({table_name(stmt.this)}))
        return Access(ADMIN)


def _either(stop: threading.Event, cancel: Cancel | None) -> Cancel:
    """Cancelled when the statement is stopped (``KILL QUERY``) or its caller cancels."""
    if cancel is None:
        return stop
    if callable(cancel):
        return lambda: stop.is_set() or cancel()
    return lambda: stop.is_set() or cancel.is_set()


def _names_a_source(target: exp.Expression) -> bool:
    """Whether DESCRIBE's ``target`` is a connector's table (``kyma.public.t`` is kyma's)."""
    if not isinstance(target, exp.Table) or not isinstance(target.this, exp.Identifier):
        return False
    return bool(schema_names.local_name(target.copy()).args.get("catalog"))


def _unparsed(sql: str) -> Access | None:
    """What a statement that does not parse would need, from its first word (a read when it
    starts like a query); None when it does not even tokenize (the error is told to anyone)."""
    try:
        tokens = Kyma().tokenize(sql)
    except TokenError:
        return None
    first = tokens[0].text.upper() if tokens else ""
    if first == "INSERT":  # which table is not known: what ingest tokens may hear
        return Access(WRITE)
    return Access(READ if first in QUERY_WORDS or first == "EXPLAIN" else ADMIN)


def _refuse_session_statement(stmt: exp.Expression) -> None:
    """Savepoints outside a session's transaction block (every statement here is one), the
    notifications kyma does not send and transaction blocks, refused in Postgres's words."""
    if isinstance(stmt, Savepoint):
        verb = "RELEASE SAVEPOINT" if stmt.args.get("release") else "SAVEPOINT"
        raise NoTransactionError(f"{verb} can only be used in transaction blocks")
    if isinstance(stmt, exp.Rollback) and stmt.args.get("savepoint"):
        raise NoTransactionError("ROLLBACK TO SAVEPOINT can only be used in transaction blocks")
    if isinstance(stmt, Cursor):
        _refuse_cursor(stmt)
    if isinstance(stmt, Notification):
        raise UnsupportedStatementError(
            f"{stmt.verb} is not supported: kyma has no asynchronous notifications"
        )
    verb = _PREPARED.get(type(stmt))
    if verb is not None:
        raise UnsupportedStatementError(
            f"{verb} is not supported here: prepared statements live in a session (a Postgres"
            " protocol connection has them); HTTP and Flight SQL bind parameters per request"
        )
    verb = _TRANSACTION_VERBS.get(type(stmt))
    if verb is not None:
        raise UnsupportedStatementError(
            f"{verb} is not supported here: each statement runs on its own, with no"
            " transaction block (a Postgres protocol connection has them)"
        )


def _refuse_cursor(stmt: Cursor) -> None:
    """A cursor statement outside a session: no cursor is open, and DECLARE needs a
    transaction block (WITH HOLD, a session to outlive it: the Postgres protocol's)."""
    if stmt.verb == "DECLARE" and not stmt.args.get("hold"):
        raise NoTransactionError("DECLARE CURSOR can only be used in transaction blocks")
    if stmt.verb == "DECLARE" or isinstance(stmt.this, exp.Star):
        raise UnsupportedStatementError(
            f"{stmt.verb} is not supported here: cursors live in a session (a Postgres"
            " protocol connection has them)"
        )
    raise CursorNotFoundError(f'cursor "{stmt.name}" does not exist')


_TRANSACTION_VERBS = {exp.Transaction: "BEGIN", exp.Commit: "COMMIT", exp.Rollback: "ROLLBACK"}
_PREPARED = {Prepare: "PREPARE", ExecutePrepared: "EXECUTE", Deallocate: "DEALLOCATE"}
_SESSION_STATEMENTS = (Savepoint, Notification, Cursor, *_TRANSACTION_VERBS, *_PREPARED)


def _kind(stmt: exp.Expression) -> str:
    """The statement's own first word (``TRUNCATE``, ``SAVEPOINT``), never a parser node's."""
    if isinstance(stmt, KymaStatement):
        return f"{stmt.verb} {stmt.noun}"
    if isinstance(stmt, exp.Command):
        return str(stmt.this).upper()
    tokens = Kyma().tokenize(stmt.sql("postgres"))
    return tokens[0].text.upper() if tokens else stmt.key.upper()
