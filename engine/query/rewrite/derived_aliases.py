"""Every derived table gets an alias of its own before DataFusion plans the statement.

DataFusion 55's projection optimizer drops one of two consecutive projections whose
expressions are structurally equal, as if it were redundant. An unaliased derived table adds
no alias node between the projections, so ``SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM
t)`` returned n + 1 instead of n + 2 (apache/datafusion#24686, fixed upstream after 55). An
alias puts a node between the two projections, and the answer is right again.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM (SELECT 1 AS n))")
>>> print(rule(stmt).sql("postgres"))
SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM (SELECT 1 AS n) AS _kyma_d1) AS _kyma_d0
>>> nested_join = sqlglot.parse_one("SELECT 1 FROM k LEFT JOIN (u JOIN o ON o.a = u.a) ON TRUE")
>>> print(rule(nested_join).sql())
SELECT 1 FROM k LEFT JOIN (u JOIN o ON o.a = u.a) ON TRUE
"""

from __future__ import annotations

from itertools import count

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    numbers = count()
    for subquery in stmt.find_all(exp.Subquery):
        placed = isinstance(subquery.parent, exp.From | exp.Join | exp.Lateral)
        query = isinstance(subquery.this, exp.Query)  # not a parenthesized join: (a JOIN b)
        if placed and query and not subquery.alias:
            subquery.set("alias", exp.TableAlias(this=exp.to_identifier(f"_kyma_d{next(numbers)}")))
    return stmt
