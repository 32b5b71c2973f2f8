"""QueryEngine: the entry point that runs one SQL statement."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.tokens import Token, Tokenizer

from kyma.engine.catalog import Catalog
from kyma.engine.errors import NotFoundError, SqlError, UnsupportedStatementError
from kyma.engine.format import SegmentFormat
from kyma.engine.query import _ddl, _time_travel
from kyma.engine.query._access import (
    ADMIN,
    QUERY_WORDS,
    READ,
    Access,
    every_table,
    federated_tables,
    readable,
)
from kyma.engine.query._estimate import check_functions
from kyma.engine.query._guard import check_in_lists, check_statement, too_deep
from kyma.engine.query._limits import QueryGate, QueryLimits
from kyma.engine.query._parse import parse_statement, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._select import SelectPlanner
from kyma.engine.query.federation import Federation
from kyma.engine.query.rewrite import rewrite
from kyma.engine.storage import ObjectStore


class QueryEngine:
    def __init__(
        self,
        catalog: Catalog,
        store: ObjectStore,
        fmt: SegmentFormat,
        federation: Federation | None = None,
        statements: Sequence[Callable[[str], QueryResult | None]] = (),
        limits: QueryLimits | None = None,
    ) -> None:
        """``statements`` run kyma's own statement kinds (CREATE SOURCE…) before parsing:
        each returns a result, or None when the SQL is not its kind. ``limits`` (timeout,
        memory, concurrency, result size) apply to every statement; None: no limits.
        ``gate.listeners`` hear of every statement (its time, outcome and stats)."""
        self.catalog = catalog
        self.federation = federation
        self.statements = [*([federation.statement] if federation else []), *statements]
        self.planner = SelectPlanner(catalog, store, fmt, federation, limits)
        self.gate = QueryGate(limits)
        self.limits = limits or QueryLimits()  # the statement's shape is always bounded

    def execute(
        self,
        sql: str,
        *,
        snapshot: int | None = None,
        pruning: bool = True,
        pushdown: bool = True,
        authorize: Callable[[Access], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> QueryResult:
        """Run one statement; SqlError / SchemaError / NotFoundError for user mistakes.

        ``snapshot`` reads the table that owns that snapshot id as of it (time travel).
        ``pruning=False`` scans every block (a diagnostic: answers must not change).
        ``pushdown=False`` pushes only projections to federated sources (a baseline).
        ``authorize`` is called with what the statement needs before anything runs, and
        raises to refuse it; SHOW TABLES lists the tables it lets the caller read. ``cancel``,
        set while the statement runs, cancels it (QueryCancelledError).
        """
        limits = self.limits
        check_statement(sql, limits.max_statement_bytes, limits.max_expression_depth)
        check_in_lists(sql, limits.max_in_list_values)
        try:
            if authorize is not None:
                authorize(self.access(sql))
            visible = readable(authorize) if authorize is not None else None
            return self.gate.run(
                lambda: self._execute(sql, snapshot, pruning, pushdown, visible), cancel
            )
        except RecursionError:
            raise too_deep() from None

    def _execute(
        self,
        sql: str,
        snapshot: int | None,
        pruning: bool,
        pushdown: bool,
        visible: Callable[[str], bool] | None,
    ) -> QueryResult:
        first = (_first_words(sql) or [""])[0]
        if first not in QUERY_WORDS and first != "EXPLAIN":  # kyma's own statements
            for statement in self.statements:
                handled = statement(sql)
                if handled is not None:
                    return handled
        sql, explain = _strip_explain(sql)
        stmt = parse_statement(_time_travel.apply(sql))
        if isinstance(stmt, exp.Query):
            check_functions(stmt, self.limits.memory_bytes)
            return self.planner.run(
                rewrite(normalize_identifiers(stmt, dialect="postgres")),
                snapshot=snapshot,
                explain=explain,
                pruning=pruning,
                pushdown=pushdown,
            )
        if explain:
            raise UnsupportedStatementError("EXPLAIN applies to queries only")
        if isinstance(stmt, exp.Create):
            return _ddl.create_table(self.catalog, stmt)
        if isinstance(stmt, exp.Alter):
            return _ddl.alter_table(self.catalog, stmt)
        if isinstance(stmt, exp.Drop):
            return _ddl.drop_table(self.catalog, stmt)
        if isinstance(stmt, exp.Describe):
            return self._describe(stmt)
        if _ddl.is_show_tables(stmt):
            return _ddl.show_tables(self.catalog, visible)
        raise UnsupportedStatementError(f"unsupported statement: {_kind(stmt)}")

    def _describe(self, stmt: exp.Describe) -> QueryResult:
        """A kyma table, or ``connector.schema.table`` through its connector."""
        target = stmt.this
        if isinstance(target, exp.Table) and target.args.get("catalog"):
            if self.federation is None:
                raise NotFoundError(f"no connector named {target.catalog!r}")
            return self.federation.describe_table(target.catalog, target.db, target.name)
        return _ddl.describe(self.catalog, stmt)

    def access(self, sql: str) -> Access:
        """What running ``sql`` needs: READ and the tables for queries and DESCRIBE; READ for
        SHOW TABLES (it lists what the caller may read), READ of every table for the other
        SHOWs; ADMIN for everything else. Tables are found as the planner finds them."""
        first, second = (_first_words(sql) + ["", ""])[:2]
        if first == "SHOW":
            return Access(READ) if second == "TABLES" else every_table()
        body, _ = _strip_explain(sql)
        try:
            stmt = parse_statement(_time_travel.apply(body))
        except SqlError:  # a kyma statement (CREATE SOURCE…), or a query that fails when run
            return Access(READ if first in QUERY_WORDS or first == "EXPLAIN" else ADMIN)
        if isinstance(stmt, exp.Query):
            stmt = rewrite(normalize_identifiers(stmt, dialect="postgres"))
            local = {
                _time_travel.split_versioned(raw)[0] for raw, _ in self.planner.local_tables(stmt)
            }
            return Access(READ, frozenset(local | federated_tables(stmt)))
        if isinstance(stmt, exp.Describe):
            if isinstance(stmt.this, exp.Table) and stmt.this.args.get("catalog"):
                return Access(READ, frozenset(federated_tables(stmt)))
            return Access(READ, frozenset({table_name(stmt.this)}))
        return Access(ADMIN)


_PREFIX = 256  # characters tokenized to find a statement's first words


def _leading_tokens(sql: str, count: int) -> list[Token]:
    """The first ``count`` tokens of ``sql``, from a prefix when it holds them: tokenizing
    a statement with a 100 000-value IN list takes seconds. TokenError if it does not
    tokenize."""
    if len(sql) > _PREFIX:
        try:
            tokens = Tokenizer().tokenize(sql[:_PREFIX])
        except Exception:  # cut inside a string or comment: tokenize it all
            tokens = []
        if len(tokens) > count:  # only the prefix's last token may be cut short
            return tokens[:count]
    return Tokenizer().tokenize(sql)[:count]


def _first_words(sql: str) -> list[str]:
    """The first two words of ``sql``, upper-cased (fewer when it has fewer)."""
    try:
        tokens = _leading_tokens(sql, 2)
    except Exception:  # sqlglot's TokenError; running the statement reports it
        return []
    return [t.text.upper() for t in tokens]


def _strip_explain(sql: str) -> tuple[str, bool]:
    try:
        tokens = _leading_tokens(sql, 1)
    except Exception as e:  # sqlglot's TokenError
        raise SqlError(f"syntax error: {e}") from None
    if tokens and tokens[0].text.upper() == "EXPLAIN":
        return sql[tokens[0].end + 1 :], True
    return sql, False


def _kind(stmt: exp.Expression) -> str:
    if isinstance(stmt, exp.Command):
        return str(stmt.this).upper()
    return stmt.key.upper()
