"""Every unnamed projection of the outermost SELECT is aliased ``column<position>``.

DataFusion refuses two projections it names alike ("Projections require unique expression
names"), and its names drop what the rewrite rules add: ``round(2.5)`` and
``round(2.5::numeric)``, or ``INTERVAL '1 hour' * 2`` and ``2 * INTERVAL '1 hour'`` once
rewritten, clash although Postgres answers both. The answer's names are Postgres's, taken
before the rewrites (``_output_names``); an expression whose Postgres name another column
holds keeps this alias. Applied last, to the statement DataFusion plans.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT a, round(2.5), round(2.5) AS r, 1 + 1 FROM t ORDER BY 1",
...     read="postgres")
>>> print(rule(stmt).sql("postgres"))
SELECT a, ROUND(2.5) AS column2, ROUND(2.5) AS r, 1 + 1 AS column4 FROM t ORDER BY 1
>>> print(rule(sqlglot.parse_one("SELECT round(2.5) FROM t", read="postgres")).sql("postgres"))
SELECT ROUND(2.5) FROM t
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    outer = stmt
    while isinstance(outer, exp.SetOperation):
        outer = outer.this
    if not isinstance(outer, exp.Select) or len(outer.expressions) < 2:
        return stmt
    taken = {p.alias_or_name for p in outer.expressions}
    for position, projection in enumerate(outer.expressions, 1):
        if isinstance(projection, exp.Alias | exp.Column | exp.Star):
            continue
        alias = f"column{position}"
        while alias in taken:
            alias += "_"
        taken.add(alias)
        projection.replace(exp.Alias(this=projection.copy(), alias=exp.to_identifier(alias)))
    return stmt
