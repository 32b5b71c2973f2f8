"""``array_upper(a, d)`` as ``array_length(a, d)``: kyma's arrays start at 1, so their upper
bound is their length.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT array_upper(a, 1)", read="postgres")).sql("postgres")
'SELECT ARRAY_LENGTH(a, 1)'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = [c for c in stmt.find_all(exp.Anonymous) if c.name.lower() == "array_upper"]
    replace_all((c, exp.Anonymous(this="array_length", expressions=c.expressions)) for c in calls)
    return stmt
