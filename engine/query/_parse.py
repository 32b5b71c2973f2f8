"""Parsing with sqlglot (kyma's dialect) into exactly one statement, with precise errors."""

from __future__ import annotations

import sqlglot
import sqlglot.errors
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from kyma.engine.errors import (
    NotFoundError,
    SqlError,
    UndefinedSchemaError,
    UnsupportedStatementError,
)
from kyma.engine.query._syntax import describe as describe_syntax_error
from kyma.engine.query._syntax import describe_token_error
from kyma.engine.query.dialect import Explain, Kyma
from kyma.engine.query.rewrite import float_precision, rewrite, schema_names
from kyma.engine.types import KymaType

_SIMPLE_TYPES = {
    exp.DataType.Type.BOOLEAN: "bool",
    exp.DataType.Type.TINYINT: "int",
    exp.DataType.Type.SMALLINT: "int",
    exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "long",
    exp.DataType.Type.FLOAT: "float4",  # Postgres's real: 32 bits
    exp.DataType.Type.DOUBLE: "real",  # kyma's real: 64 bits
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.VARCHAR: "string",
    exp.DataType.Type.CHAR: "string",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.TIMESTAMPTZ: "timestamp",
    exp.DataType.Type.JSON: "dynamic",
    exp.DataType.Type.JSONB: "dynamic",
}


def parse_statement(sql: str) -> exp.Expression:
    """The one statement in ``sql``; SqlError with line and column if it does not parse."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=Kyma) if s is not None]
    except sqlglot.errors.ParseError as e:
        line, column, message = describe_syntax_error(sql, e.errors[0] if e.errors else {})
        where = f"line {line or '?'}, column {column or '?'}: "
        raise SqlError(f"syntax error at {where}{message}") from None
    except sqlglot.errors.TokenError as e:
        line, column, message = describe_token_error(sql, e)
        where = f" at line {line}, column {column}" if line else ""
        raise SqlError(f"syntax error{where}: {message}") from None
    if not statements:
        raise SqlError("empty statement")
    if len(statements) > 1:
        raise SqlError(f"one statement per request, got {len(statements)}")
    return statements[0]


def parse(sql: str) -> exp.Expression:
    """``sql`` parsed once; a query (explained or not, or an INSERT's SELECT) with its names
    folded and kyma's rewrite rules applied: the tree both authorization and the planner read."""
    stmt = parse_statement(sql)
    if isinstance(stmt, Explain) and isinstance(stmt.this, exp.Query):
        stmt.set("this", _rewritten(stmt.this))
    elif isinstance(stmt, exp.Query):
        stmt = _rewritten(stmt)
    elif isinstance(stmt, exp.Insert) and isinstance(stmt.expression, exp.Query):
        stmt.set("expression", _rewritten(stmt.expression))
    return stmt


def _rewritten(query: exp.Query) -> exp.Expression:
    return rewrite(normalize_identifiers(query, dialect="postgres"))


def identifier(node: exp.Expression) -> str:
    """A name as written: unquoted identifiers fold to lower case, as in Postgres."""
    ident = node if isinstance(node, exp.Identifier) else node.args.get("this")
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    raise UnsupportedStatementError(f"expected a plain name, got {node.sql('postgres')!r}")


def table_name(table: exp.Expression, *, creating: bool = False) -> str:
    """A kyma table's name: ``t``, ``public.t`` or ``kyma.public.t``. Another schema is
    NotFoundError (42P01), or UndefinedSchemaError (3F000) when ``creating`` the table."""
    if isinstance(table, exp.Table) and isinstance(table.this, exp.Identifier):
        try:
            table = schema_names.local_name(table.copy())
        except NotFoundError:
            if not creating:
                raise
            schema = table.args["db"]
            raise UndefinedSchemaError(f'schema "{identifier(schema)}" does not exist') from None
    if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
        raise UnsupportedStatementError(f"expected a kyma table name, got {table.sql()!r}")
    return identifier(table.this)


def kyma_type(dtype: exp.DataType) -> KymaType:
    """The kyma type a SQL type names; SchemaError for types kyma does not store.

    >>> [kyma_type(exp.DataType.build(t, dialect="postgres")).name for t in ("real", "float(53)")]
    ['float4', 'real']
    """
    dtype = float_precision.rule(dtype.copy())  # float(p): real or double precision
    if dtype.this in _SIMPLE_TYPES:
        return KymaType(_SIMPLE_TYPES[dtype.this])
    if dtype.this == exp.DataType.Type.ARRAY and len(dtype.expressions) == 1:
        return KymaType.array(kyma_type(dtype.expressions[0]))
    if dtype.this == exp.DataType.Type.VECTOR and len(dtype.expressions) == 1:
        return KymaType.parse(f"vector({dtype.expressions[0].name})")
    if dtype.this == exp.DataType.Type.USERDEFINED:
        return KymaType.parse(str(dtype.args.get("kind")))
    return KymaType.parse(dtype.sql("postgres"))
