"""Grafana lists the schemas of the search path with ``IN (SELECT … FROM generate_series(…),
string_to_array(current_setting('search_path'), ',') s)``: kyma's search path has one
schema of tables, so the subquery is that schema.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT 1 WHERE s IN (SELECT trim(p[i]) FROM generate_series(1, 2) AS i,"
...     " string_to_array(current_setting('search_path'), ',') AS p)", read="postgres"
... )
>>> rule(stmt).sql("postgres")
"SELECT 1 WHERE s IN ('public')"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog._information_schema import SCHEMA


def rule(stmt: exp.Expression) -> exp.Expression:
    for test in list(stmt.find_all(exp.In)):
        query = test.args.get("query")
        select = query.unnest() if isinstance(query, exp.Subquery) else query
        if isinstance(select, exp.Select) and _splits_search_path(select):
            test.set("query", None)
            test.set("expressions", [exp.Literal.string(SCHEMA)])
    return stmt


def _splits_search_path(select: exp.Select) -> bool:
    for setting in select.find_all(exp.Anonymous, exp.Func):
        if setting.name.lower() != "current_setting" or not setting.expressions:
            continue
        if setting.expressions[0].name.lower() == "search_path":
            return True
    return False
