"""``float(p)`` is Postgres's ``real`` for p from 1 to 24 and ``double precision`` from 25 to
53 (sqlglot keeps ``FLOAT(p)``, which DataFusion reads as Float32 whatever p is); another p
is refused.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT x::float(10), CAST(y AS float(53))", read="postgres")).sql()
'SELECT CAST(x AS FLOAT), CAST(y AS DOUBLE)'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError

_T = exp.DataType.Type


def rule(expression: exp.Expression) -> exp.Expression:
    for dtype in expression.find_all(exp.DataType):
        if dtype.this not in (_T.FLOAT, _T.DOUBLE) or len(dtype.expressions) != 1:
            continue
        bits = dtype.expressions[0].this
        if not (isinstance(bits, exp.Literal) and bits.is_int and 1 <= int(bits.name) <= 53):
            raise UnsupportedStatementError(
                f"{dtype.sql('postgres')!r}: the precision of float must be 1 to 53 bits"
            )
        dtype.set("this", _T.FLOAT if int(bits.name) <= 24 else _T.DOUBLE)
        dtype.set("expressions", [])
    return expression
