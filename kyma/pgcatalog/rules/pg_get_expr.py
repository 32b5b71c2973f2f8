"""``pg_get_expr(expr, relation, pretty)`` as ``pg_get_expr(expr, relation)``: kyma stores no
expressions, so pretty-printing changes nothing.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT pg_get_expr(d.adbin, d.adrelid, true)")).sql("postgres")
'SELECT PG_GET_EXPR(d.adbin, d.adrelid)'
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    for call in list(stmt.find_all(exp.Anonymous)):
        if call.name.lower() == "pg_get_expr" and len(call.expressions) == 3:
            call.set("expressions", call.expressions[:2])
    return stmt
