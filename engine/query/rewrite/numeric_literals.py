"""A number literal written as text is Postgres's numeric, with the scale it is written with.

DataFusion reads ``1.50`` as a float, so ``1.50::text`` was ``'1.5'`` (Postgres: ``'1.50'``),
``1.50 * 2.0`` was ``3`` (``3.000``) and ``1.5e-7`` was written ``1.5e-07`` (``0.00000015``).
Where a value becomes text — a cast to a text type, an operand of ``||``, an argument of
``concat`` / ``concat_ws``, or a result column of the statement — and is made of constants
only (no column, no float), each literal with a point or an exponent in it, or an integer
past bigint, becomes that exact decimal (``CAST('1.50' AS DECIMAL(3, 2))``), and
DataFusion's decimal arithmetic keeps Postgres's scales (``+``: the larger, ``*``: their
sum). So are the literals of a ``VALUES`` column whose rows are all such constants: the
column is numeric, as in Postgres (``VALUES (1.5), (2.50)``: ``max`` is ``2.50``; a decimal
column has one scale, the widest). Elsewhere literals stay as they are: next to a float
column Postgres converts the numeric to a float anyway, and DataFusion would convert the
float column to a decimal. Applied after the output names are taken (``SELECT 1.50`` stays
``?column?``).

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 1.50, 1.5e-7::text, x * 1.5, 2.0 || 'a' FROM t")
>>> rule(stmt).sql("postgres")
"SELECT CAST('1.50' AS DECIMAL(3, 2)), CAST(CAST('0.00000015' AS DECIMAL(8, 8)) AS TEXT), \
x * 1.5, CAST('2.0' AS DECIMAL(2, 1)) || 'a' FROM t"
>>> rule(sqlglot.parse_one("SELECT 9223372036854775807, 9223372036854775808")).sql()
"SELECT 9223372036854775807, CAST('9223372036854775808' AS DECIMAL(19, 0))"
>>> rule(sqlglot.parse_one("SELECT * FROM (VALUES (1.5, 1.5), (2, 2.5::float)) AS t(a, b)")).sql()
"SELECT * FROM (VALUES (CAST('1.5' AS DECIMAL(2, 1)), 1.5), (2, CAST(2.5 AS FLOAT))) AS t(a, b)"
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query.rewrite import numeric_input

MAX_PRECISION = 76
"""DataFusion's widest decimal (Decimal256): a longer literal is refused (0A000)."""
_TEXT = {exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR}


def rule(stmt: exp.Expression) -> exp.Expression:
    for value in _text_values(stmt):
        if not _constant(value):
            continue
        for literal in list(value.find_all(exp.Literal)):
            if literal.is_number and (_fraction(literal.name) or _past_int8(literal.name)):
                literal.replace(exact(literal.name))
    return stmt


def _fraction(text: str) -> bool:
    return any(c in text for c in ".eE")


def _past_int8(text: str) -> bool:
    """An integer literal past bigint, which Postgres reads as numeric (DataFusion: a float)."""
    digits = text.lstrip("0")
    return len(digits) > 19 or (len(digits) == 19 and int(digits) >= 2**63)


def exact(text: str) -> exp.Expression:
    """The decimal a number literal's ``text`` stands for, as Postgres reads it."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return exp.Literal.number(text)
    scale = max(0, -int(value.as_tuple().exponent))
    written = format(value, "f")
    precision = max(len(written.lstrip("-").replace(".", "").lstrip("0")), scale, 1)
    numeric_input.check_length(len(text))  # past Postgres's own numeric: 22003, as there
    if precision > MAX_PRECISION:
        raise UnsupportedStatementError(
            f"the numeric literal {text!r} has more than {MAX_PRECISION} digits;"
            " write it as a float (CAST(... AS double precision))"
        )
    return exp.Cast(
        this=exp.Literal.string(written),
        to=exp.DataType.build(f"DECIMAL({precision}, {scale})"),
    )


def _text_values(stmt: exp.Expression) -> list[exp.Expression]:
    """The values ``stmt`` turns into text or returns as result columns."""
    values: list[exp.Expression] = []
    for cast in stmt.find_all(exp.Cast):
        if cast.to.this in _TEXT:
            values.append(cast.this)
    for concat in stmt.find_all(exp.DPipe):
        values += [concat.this, concat.expression]
    for call in stmt.find_all(exp.Concat, exp.ConcatWs):
        values += list(call.expressions)
    if isinstance(stmt, exp.Select):  # the outermost SELECT's (a subquery's meet other values)
        values += [p.unalias() for p in stmt.expressions]
    for rows in stmt.find_all(exp.Values):
        tuples = [row.expressions for row in rows.expressions if isinstance(row, exp.Tuple)]
        if len(tuples) != len(rows.expressions) or len({len(row) for row in tuples}) != 1:
            continue
        for column in zip(*tuples, strict=True):  # a column of constants only is numeric
            if all(_constant(value) for value in column):
                values += column
    return values


def _constant(node: exp.Expression) -> bool:
    """Whether ``node`` reads no column and makes no float (no cast to one, no ``random()``,
    no subquery): its decimals then never meet a float, which DataFusion would convert to a
    decimal (lossily) where Postgres converts the numeric to a float."""
    floats = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
    if node.find(exp.Column, exp.Subquery, exp.Select, exp.Rand, exp.Pi, exp.Anonymous):
        return False
    return not any(c.to.this in floats for c in node.find_all(exp.Cast, exp.TryCast))
