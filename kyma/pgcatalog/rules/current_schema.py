"""``current_schema()`` as a call of kyma's ``current_schema`` function: sqlglot writes the
function back as the bare word ``CURRENT_SCHEMA``, which DataFusion reads as a column.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT current_schema()", read="postgres")).sql("postgres")
'SELECT CURRENT_SCHEMA()'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = list(stmt.find_all(exp.CurrentSchema))
    replace_all((call, exp.Anonymous(this="current_schema")) for call in calls)
    return stmt
