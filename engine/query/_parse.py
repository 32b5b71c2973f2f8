"""Parsing with sqlglot (postgres dialect) into exactly one statement, with precise errors."""

from __future__ import annotations

import re

import sqlglot
import sqlglot.errors
from sqlglot import exp

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query._syntax import describe as describe_syntax_error
from kyma.engine.types import KymaType

_SIMPLE_TYPES = {
    exp.DataType.Type.BOOLEAN: "bool",
    exp.DataType.Type.TINYINT: "int",
    exp.DataType.Type.SMALLINT: "int",
    exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "long",
    exp.DataType.Type.FLOAT: "real",
    exp.DataType.Type.DOUBLE: "real",
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.VARCHAR: "string",
    exp.DataType.Type.CHAR: "string",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.TIMESTAMPTZ: "timestamp",
    exp.DataType.Type.JSON: "dynamic",
    exp.DataType.Type.JSONB: "dynamic",
}


# ``ALTER TABLE t SET RETENTION '30 days'``, which sqlglot does not parse, as the option form.
_SET_RETENTION = re.compile(
    r"(\s*ALTER\s+TABLE\s+.+?\s+SET)\s+RETENTION\s+('[^']*')\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def parse_statement(sql: str) -> exp.Expression:
    """The one statement in ``sql``; SqlError with line and column if it does not parse."""
    if match := _SET_RETENTION.fullmatch(sql):
        sql = f"{match.group(1)} (retention = {match.group(2)})"
    try:
        statements = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    except sqlglot.errors.ParseError as e:
        line, column, message = describe_syntax_error(sql, e.errors[0] if e.errors else {})
        where = f"line {line or '?'}, column {column or '?'}: "
        raise SqlError(f"syntax error at {where}{message}") from None
    except sqlglot.errors.TokenError as e:
        raise SqlError(f"syntax error: {e}") from None
    if not statements:
        raise SqlError("empty statement")
    if len(statements) > 1:
        raise SqlError(f"one statement per request, got {len(statements)}")
    return statements[0]


def identifier(node: exp.Expression) -> str:
    """A name as written: unquoted identifiers fold to lower case, as in Postgres."""
    ident = node if isinstance(node, exp.Identifier) else node.args.get("this")
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    raise UnsupportedStatementError(f"expected a plain name, got {node.sql('postgres')!r}")


def table_name(table: exp.Expression) -> str:
    if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
        raise UnsupportedStatementError(f"expected a kyma table name, got {table.sql()!r}")
    return identifier(table.this)


def kyma_type(dtype: exp.DataType) -> KymaType:
    """The kyma type a SQL type names; SchemaError for types kyma does not store."""
    if dtype.this in _SIMPLE_TYPES:
        return KymaType(_SIMPLE_TYPES[dtype.this])
    if dtype.this == exp.DataType.Type.ARRAY and len(dtype.expressions) == 1:
        return KymaType.array(kyma_type(dtype.expressions[0]))
    if dtype.this == exp.DataType.Type.VECTOR and len(dtype.expressions) == 1:
        return KymaType.parse(f"vector({dtype.expressions[0].name})")
    if dtype.this == exp.DataType.Type.USERDEFINED:
        return KymaType.parse(str(dtype.args.get("kind")))
    return KymaType.parse(dtype.sql("postgres"))
