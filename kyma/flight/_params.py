"""Bound parameters into a statement: each placeholder becomes a typed SQL literal.

The placeholders (``?`` in order, or ``$1``, ``$2``…) are found by sqlglot's tokenizer, so
one inside a string literal or a comment stays put; each is replaced by a literal that
sqlglot renders from the value (strings quoted and escaped by sqlglot, timestamps as casts),
never by pasting the raw value into the text. The rest of the statement is kept byte for
byte, so kyma's own syntax (``live(...)``, ``AS OF SNAPSHOT``) goes through unchanged.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

import pyarrow as pa
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from kyma.engine.errors import SqlError


def placeholders(sql: str) -> list[tuple[int, int, int]]:
    """``(start, end, index)`` per placeholder, ``end`` exclusive and ``index`` 0-based.

    >>> placeholders("SELECT '?', x FROM t WHERE x = ? AND y = ?")
    [(31, 32, 0), (41, 42, 1)]
    >>> placeholders("SELECT $2 + $1")
    [(7, 9, 1), (12, 14, 0)]
    """
    try:
        tokens = Postgres().tokenize(sql)
    except TokenError as e:
        raise SqlError(f"syntax error: {e}") from None
    found, positional, numbered = [], 0, False
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.PLACEHOLDER and token.text == "?":
            found.append((token.start, token.end + 1, positional))
            positional += 1
        elif token.token_type == TokenType.PARAMETER and i + 1 < len(tokens):
            number = tokens[i + 1]
            if number.token_type == TokenType.NUMBER and number.start == token.end + 1:
                if not number.text.isdigit() or int(number.text) < 1:
                    raise SqlError(f"bad parameter ${number.text}: expected $1, $2, …")
                found.append((token.start, number.end + 1, int(number.text) - 1))
                numbered = True
    if positional and numbered:
        raise SqlError("a statement uses either ? or $1, $2, … placeholders, not both")
    return found


def bind(sql: str, parameters: pa.RecordBatch | pa.Table | None) -> str:
    """``sql`` with its placeholders replaced by the one row of ``parameters``."""
    spots = placeholders(sql)
    if parameters is None or parameters.num_columns == 0:
        if spots:
            raise SqlError(f"the statement has {len(spots)} placeholder(s) and no parameters")
        return sql
    if parameters.num_rows != 1:
        raise SqlError(f"expected one row of parameters per query, got {parameters.num_rows}")
    values = [parameters.column(i)[0].as_py() for i in range(parameters.num_columns)]
    needed = max((index for _, _, index in spots), default=-1) + 1
    if needed != len(values):
        raise SqlError(f"the statement takes {needed} parameter(s), got {len(values)}")
    parts, last = [], 0
    for start, end, index in spots:
        parts += [sql[last:start], literal(values[index]).sql(dialect="postgres")]
        last = end
    return "".join([*parts, sql[last:]])


def literal(value: Any) -> exp.Expression:
    """The SQL literal of one parameter value.

    >>> literal("it's").sql(dialect="postgres")
    "'it''s'"
    >>> literal(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)).sql(dialect="postgres")
    "CAST('2026-01-02T03:04:05+00:00' AS TIMESTAMPTZ)"
    """
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SqlError(f"parameter {value!r}: NaN and infinities have no SQL literal")
        return exp.Literal.number(repr(value))
    if isinstance(value, decimal.Decimal):
        return exp.Literal.number(str(value))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return exp.cast(exp.Literal.string(value.isoformat()), kind)
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), "DATE")
    if isinstance(value, list | tuple):
        return exp.Array(expressions=[literal(v) for v in value])
    raise SqlError(f"parameter {value!r}: unsupported type {type(value).__name__}")
