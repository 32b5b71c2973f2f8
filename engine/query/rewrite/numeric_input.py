"""Text cast to a decimal is bounded in length first: Postgres's numeric holds 131 072 digits
before the point and 16 383 after, and Arrow parses longer text by recursing once per 38
digits, overflowing the stack of the thread that runs it (a 900 000-digit value segfaults the
server on DataFusion's 2 MiB worker threads).

So the operand of a cast to DECIMAL/NUMERIC goes through ``kyma_numeric_input`` (``udfs``),
which hands its text on unchanged or raises OutOfRangeError (22003) for a value longer than
``MAX_NUMERIC_INPUT`` characters — unless the operand is known not to be text: a number, an
arithmetic result, a count, sum or average, a cast to another type, or a column that is
numeric (``not_text``) in every table that has it. A string literal is checked here.

A plain ``numeric`` (no precision) is ``decimal(38, 10)`` in kyma, where Postgres keeps every
digit: text with more than ``SCALE`` decimals would be rounded (``'2.4999999999999996'::numeric``
would round to 3), so it is refused (0A000) — by ``kyma_numeric_text`` for values, here for
a literal. ``numeric(p, s)`` rounds to ``s`` in both.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT s::numeric(9, 2), n::numeric, CAST(1 + n AS DECIMAL) FROM t")
>>> rule(stmt, {"n"}).sql("postgres")
'SELECT CAST(KYMA_NUMERIC_INPUT(s) AS DECIMAL(9, 2)), CAST(n AS DECIMAL), CAST(1 + n AS DECIMAL) \
FROM t'
>>> rule(sqlglot.parse_one("SELECT s::numeric FROM t"), set()).sql("postgres")
'SELECT CAST(KYMA_NUMERIC_TEXT(s) AS DECIMAL) FROM t'
>>> rule(sqlglot.parse_one("SELECT '2.4999999999999996'::numeric"), set())
Traceback (most recent call last):
...
kyma.engine.errors.UnsupportedStatementError: numeric text '2.4999999999999996' has more than \
10 decimals: kyma's numeric keeps 10 (cast to numeric(p, s) to round it)
>>> rule(sqlglot.parse_one(f"SELECT '{'9' * 200_000}'::numeric"), set())
Traceback (most recent call last):
...
kyma.engine.errors.OutOfRangeError: value overflows numeric format: a numeric input of 200000 \
characters (at most 147458)
"""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

from kyma.engine.errors import OutOfRangeError, UnsupportedStatementError

MAX_NUMERIC_INPUT = 131_072 + 16_383 + 3
"""Postgres's most digits before and after the point, a sign and the point: longer text is
no number Postgres reads (leading zeros or blanks aside)."""
FUNCTION = "kyma_numeric_input"
UNSCALED = "kyma_numeric_text"
"""``kyma_numeric_input`` that also refuses more than ``SCALE`` decimals (a plain numeric)."""
SCALE = 10

_DECIMALS = {
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.BIGDECIMAL,
    exp.DataType.Type.UDECIMAL,
    exp.DataType.Type.MONEY,
    *(
        getattr(exp.DataType.Type, name)
        for name in ("DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL256")
        if hasattr(exp.DataType.Type, name)
    ),
}
_NOT_TEXT = (exp.Binary, exp.Neg, exp.Count, exp.Sum, exp.Avg, exp.Boolean, exp.Null)


def rule(stmt: exp.Expression, not_text: Collection[str]) -> exp.Expression:
    """``not_text``: the names of columns that are not text in any table the statement reads."""
    casts = []
    for node in stmt.find_all(exp.Cast, exp.Literal):  # one walk: a long IN list is long
        if isinstance(node, exp.Literal):
            if len(node.this) > MAX_NUMERIC_INPUT and not node.is_string:
                check_length(len(node.this))
        elif node.to.this in _DECIMALS:
            casts.append(node)
    for cast in casts:
        operand = cast.this
        unscaled = not cast.to.expressions
        if isinstance(operand, exp.Literal):
            check_length(len(operand.name))
            if unscaled and operand.is_string:
                check_scale(operand.name)
        elif not _known_not_text(operand, not_text):
            function = UNSCALED if unscaled else FUNCTION
            operand.replace(exp.Anonymous(this=function.upper(), expressions=[operand.copy()]))
    return stmt


def check_scale(text: str) -> None:
    """UnsupportedStatementError if ``text`` has more decimals than a plain numeric keeps."""
    _, point, fraction = text.strip().partition(".")
    if point and len(fraction.rstrip()) > SCALE and fraction.strip().isdigit():
        raise UnsupportedStatementError(
            f"numeric text {text!r} has more than {SCALE} decimals: kyma's numeric keeps"
            f" {SCALE} (cast to numeric(p, s) to round it)"
        )


def check_length(length: int) -> None:
    """OutOfRangeError if text of ``length`` characters is too long to be a numeric."""
    if length > MAX_NUMERIC_INPUT:
        raise OutOfRangeError(
            f"value overflows numeric format: a numeric input of {length} characters"
            f" (at most {MAX_NUMERIC_INPUT})"
        )


def _known_not_text(node: exp.Expression, not_text: Collection[str]) -> bool:
    if isinstance(node, exp.Paren):
        return _known_not_text(node.this, not_text)
    if isinstance(node, exp.Cast):
        return not node.to.is_type(*exp.DataType.TEXT_TYPES)
    if isinstance(node, exp.Column):
        return node.name in not_text
    return isinstance(node, _NOT_TEXT) and not isinstance(node, exp.DPipe)
