"""QueryEngine: the entry point that runs one SQL statement."""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.catalog import Catalog
from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query import _ddl
from kyma.engine.query._parse import parse_statement
from kyma.engine.query._result import QueryResult


class QueryEngine:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def execute(self, sql: str) -> QueryResult:
        """Run one statement; SqlError / SchemaError / NotFoundError for user mistakes."""
        stmt = parse_statement(sql)
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


def _kind(stmt: exp.Expression) -> str:
    if isinstance(stmt, exp.Command):
        return str(stmt.this).upper()
    return stmt.key.upper()
