"""``array_upper(a, d)`` as ``array_length(a, d)``: kyma's arrays start at 1, so their upper
bound is their length.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT array_upper(a, 1)", read="postgres")).sql("postgres")
'SELECT ARRAY_LENGTH(a, 1)'
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    for call in list(stmt.find_all(exp.Anonymous)):
        if call.name.lower() == "array_upper":
            call.replace(exp.Anonymous(this="array_length", expressions=call.expressions))
    return stmt
