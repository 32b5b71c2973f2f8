"""QueryEngine: the entry point that runs one SQL statement."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.tokens import Tokenizer

from kyma.engine.catalog import Catalog
from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.format import SegmentFormat
from kyma.engine.query import _ddl, _time_travel
from kyma.engine.query._parse import parse_statement
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
    ) -> None:
        """``statements`` run kyma's own statement kinds (CREATE SOURCE…) before parsing:
        each returns a result, or None when the SQL is not its kind."""
        self.catalog = catalog
        self.federation = federation
        self.statements = [*([federation.statement] if federation else []), *statements]
        self.planner = SelectPlanner(catalog, store, fmt, federation)

    def execute(
        self,
        sql: str,
        *,
        snapshot: int | None = None,
        pruning: bool = True,
        pushdown: bool = True,
    ) -> QueryResult:
        """Run one statement; SqlError / SchemaError / NotFoundError for user mistakes.

        ``snapshot`` reads the table that owns that snapshot id as of it (time travel).
        ``pruning=False`` scans every block (a diagnostic: answers must not change).
        ``pushdown=False`` pushes only projections to federated sources (a baseline).
        """
        for statement in self.statements:
            handled = statement(sql)
            if handled is not None:
                return handled
        sql, explain = _strip_explain(sql)
        stmt = parse_statement(_time_travel.apply(sql))
        if isinstance(stmt, exp.Query):
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
            return _ddl.describe(self.catalog, stmt)
        if _ddl.is_show_tables(stmt):
            return _ddl.show_tables(self.catalog)
        raise UnsupportedStatementError(f"unsupported statement: {_kind(stmt)}")


def _strip_explain(sql: str) -> tuple[str, bool]:
    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception as e:  # sqlglot's TokenError
        raise SqlError(f"syntax error: {e}") from None
    if tokens and tokens[0].text.upper() == "EXPLAIN":
        return sql[tokens[0].end + 1 :], True
    return sql, False


def _kind(stmt: exp.Expression) -> str:
    if isinstance(stmt, exp.Command):
        return str(stmt.this).upper()
    return stmt.key.upper()
