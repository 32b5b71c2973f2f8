"""SQL prepared statements of one connection: ``PREPARE``, ``EXECUTE``, ``DEALLOCATE``.

PREPARE keeps a statement's text and declared parameter types under its name (checked by
kyma's dialect, which parsed it); EXECUTE binds its arguments to the text's ``$n`` (each cast
to its declared type) and hands the statement back to run. Names are shared with the
protocol's named statements (Parse), as in Postgres: DEALLOCATE drops either kind.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from kyma.engine.errors import (
    DuplicatePreparedStatementError,
    SqlError,
    UndefinedPreparedStatementError,
)
from kyma.engine.query import QueryResult
from kyma.engine.query.dialect import Deallocate, ExecutePrepared, Kyma, Prepare
from kyma.pgwire._sql_text import bind, parameter_count


@dataclass(frozen=True)
class SqlPrepared:
    body: str
    types: list[exp.DataType]
    parameters: int


class PreparedStatements:
    """The SQL prepared statements of a connection, beside its protocol ones."""

    def __init__(self, protocol: MutableMapping[str, Any]) -> None:
        self.protocol = protocol
        self.named: dict[str, SqlPrepared] = {}

    def prepare(self, stmt: Prepare) -> QueryResult:
        name = stmt.name
        if name in self.named or name in self.protocol:
            raise DuplicatePreparedStatementError(f'prepared statement "{name}" already exists')
        body, types = stmt.text("body"), list(stmt.expressions)
        count = max(len(types), parameter_count(body))
        self.named[name] = SqlPrepared(body, types, count)
        return QueryResult.status_only("PREPARE")

    def bound(self, stmt: ExecutePrepared) -> str:
        """The statement EXECUTE runs: the prepared text with its arguments in place."""
        name = stmt.name
        prepared = self.named.get(name)
        if prepared is None:
            raise UndefinedPreparedStatementError(f'prepared statement "{name}" does not exist')
        if not prepared.parameters:  # arguments to none are not even read, as in Postgres
            return prepared.body
        arguments = list(stmt.expressions)
        if len(arguments) != prepared.parameters:
            raise SqlError(f'wrong number of parameters for prepared statement "{name}"')
        literals = []
        for index, argument in enumerate(arguments):
            value = argument.sql(dialect=Kyma)
            if index < len(prepared.types):
                value = f"CAST(({value}) AS {prepared.types[index].sql('postgres')})"
            elif not isinstance(argument, exp.Literal):
                value = f"({value})"
            literals.append(value)
        return bind(prepared.body, literals)

    def deallocate(self, stmt: Deallocate) -> QueryResult:
        if isinstance(stmt.this, exp.Star):
            self.named.clear()
            self.protocol.clear()
            return QueryResult.status_only("DEALLOCATE ALL")
        name = stmt.name
        if self.named.pop(name, None) is None and self.protocol.pop(name, None) is None:
            raise UndefinedPreparedStatementError(f'prepared statement "{name}" does not exist')
        return QueryResult.status_only("DEALLOCATE")
