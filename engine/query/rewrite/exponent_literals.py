"""A number literal with an exponent is Postgres's numeric of the scale it implies.

kyma's sessions read a literal such as ``1.5`` or ``1e15`` as a decimal (``_limits``), but
DataFusion gives ``1e15`` a negative scale, ``Decimal128(1, -15)``, whose cast to a float is
off by one unit in the last place (``999999999999999.9``). Postgres reads ``1e15`` as the
numeric ``1000000000000000`` (scale 0) and ``1.50e1`` as ``15.0`` (scale 1): each such
literal becomes that decimal, written positionally with its declared precision and scale.
Applied after the output names are taken (``SELECT 1e5`` stays ``?column?``).

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT 1e15::float8, 1.50e1, 1.5e-7, 2.5")).sql("postgres")
"SELECT CAST(CAST('1000000000000000' AS DECIMAL(16, 0)) AS DOUBLE PRECISION), \
CAST('15.0' AS DECIMAL(3, 1)), CAST('0.00000015' AS DECIMAL(8, 8)), 2.5"
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError

MAX_PRECISION = 76
"""DataFusion's widest decimal (Decimal256): a longer literal is refused (0A000), or read as
a double where it is cast to one (``1e300::float8``)."""
_FLOATS = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)


def rule(stmt: exp.Expression) -> exp.Expression:
    for literal in list(stmt.find_all(exp.Literal)):
        if literal.is_number and "e" in literal.name.lower():
            literal.replace(_positional(literal))
    return stmt


def _positional(literal: exp.Literal) -> exp.Expression:
    try:
        value = Decimal(literal.name)
    except InvalidOperation:
        return literal.copy()
    scale = max(0, -int(value.as_tuple().exponent))
    written = format(value, "f")
    precision = max(len(written.lstrip("-").replace(".", "").lstrip("0")), scale, 1)
    if precision > MAX_PRECISION:
        parent = literal.parent
        if isinstance(parent, exp.Cast) and parent.to.this in _FLOATS:
            return exp.cast(exp.Literal.string(literal.name), "DOUBLE")  # 1e300::float8
        raise UnsupportedStatementError(
            f"the numeric literal {literal.name!r} has more than {MAX_PRECISION} digits;"
            " write it as a float (CAST(... AS double precision))"
        )
    return exp.Cast(
        this=exp.Literal.string(written),
        to=exp.DataType.build(f"DECIMAL({precision}, {scale})"),
    )
