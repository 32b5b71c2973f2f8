"""Projections DataFusion can name: repeated and shadowing output names get aliases.

Postgres allows one output name twice (``SELECT 52 AS c0, 13 AS c0``, ``SELECT a, a``) and
an alias named like a selected column (``SELECT 33 AS a, a FROM t``); DataFusion refuses
both ("Projections require unique expression names", "would be ambiguous"). In every SELECT,
a projection whose name an earlier one already took is aliased ``<name>_<position>``
(``column<position>`` for an expression); the
answer's names are Postgres's, computed before this rule (``_output_names``), and where two
are equal the later column keeps this alias (no answer holds one name twice).

In the outermost SELECT an unaliased projection holding a subquery is aliased too: sqlglot's
column qualification asserts an alias behind ``ORDER BY <position>``, and DataFusion names
every subquery ``<subquery>`` (two such projections would clash).

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 52 AS c0, 13 AS c0, a, a, t.a, 33 AS a, 1, 1 FROM t")
>>> print(rule(stmt).sql("postgres"))
SELECT 52 AS c0, 13 AS c0_2, a, a AS a_4, t.a AS a_5, 33 AS a_6, 1, 1 AS column8 FROM t
>>> stmt = sqlglot.parse_one("SELECT (SELECT 1), b FROM t ORDER BY 1", read="postgres")
>>> print(rule(stmt).sql("postgres"))
SELECT (SELECT 1) AS _kyma_s1, b FROM t ORDER BY 1
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression) -> exp.Expression:
    for select in stmt.find_all(exp.Select):
        _unique(select)
    outer = stmt
    while isinstance(outer, exp.SetOperation):
        outer = outer.this
    if isinstance(outer, exp.Select):
        for position, projection in enumerate(outer.expressions, 1):
            if not isinstance(projection, exp.Alias) and projection.find(exp.Subquery):
                projection.replace(_aliased(projection, f"_kyma_s{position}"))
    return stmt


def _unique(select: exp.Select) -> None:
    names = [_engine_name(p) for p in select.expressions]
    taken = set(filter(None, names))
    seen: set[str] = set()
    for position, (projection, name) in enumerate(zip(select.expressions, names, strict=True), 1):
        if name is None:
            continue
        if name in seen:
            alias = f"{name}_{position}" if _named(projection) else f"column{position}"
            while alias in taken:
                alias += "_"
            taken.add(alias)
            projection.replace(_aliased(projection.unalias(), alias))
        seen.add(name)


def _aliased(node: exp.Expression, alias: str) -> exp.Alias:
    """An Alias node (``exp.alias_`` would set a subquery's own table alias instead)."""
    return exp.Alias(this=node.copy(), alias=exp.to_identifier(alias))


def _named(projection: exp.Expression) -> bool:
    return isinstance(projection, exp.Alias | exp.Column)


def _engine_name(projection: exp.Expression) -> str | None:
    """The name DataFusion gives a projection, as far as it can clash with another's: its
    alias, a column's own name, else the expression itself (None for ``*``)."""
    if isinstance(projection, exp.Alias):
        return projection.alias
    if isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    ):
        return None
    if isinstance(projection, exp.Column):
        return projection.name
    return projection.sql("postgres")
