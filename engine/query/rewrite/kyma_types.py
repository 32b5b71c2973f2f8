"""kyma type names in casts: ``x::real`` is a double (Float64) in kyma, not Postgres' float4.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT x::real, y::long", read="postgres")).sql("postgres")
'SELECT CAST(x AS DOUBLE PRECISION), CAST(y AS BIGINT)'
"""

from __future__ import annotations

from sqlglot import exp


def rule(expression: exp.Expression) -> exp.Expression:
    for dtype in expression.find_all(exp.DataType):
        if dtype.this == exp.DataType.Type.FLOAT:
            dtype.set("this", exp.DataType.Type.DOUBLE)
    return expression
