"""``COLLATE pg_catalog.default`` (psql's patterns) taken off: the default collation is the
one every comparison uses anyway.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 1 WHERE c ~ 'x' COLLATE pg_catalog.default", "postgres")
>>> rule(stmt).sql("postgres")
"SELECT 1 WHERE c ~ 'x'"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    replace_all(
        (collate, collate.this)
        for collate in list(stmt.find_all(exp.Collate))
        if collate.expression.name.lower() == "default"
    )
    return stmt
