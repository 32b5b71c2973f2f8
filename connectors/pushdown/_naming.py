"""Output column names as Postgres gives them, before sqlglot's qualify() invents ``_col_N``.

Every block's unnamed computed outputs get the name Postgres would give (``count``,
``lower``, ``?column?``) when it is unique in the block, so a federated answer, a derived
table's columns and ORDER BY references all use the source's names.
"""

from __future__ import annotations

from sqlglot import exp


def name_outputs(query: exp.Expression) -> None:
    """Alias unnamed outputs in every block of ``query``, in place.

    >>> from sqlglot import parse_one
    >>> q = parse_one("SELECT s.count FROM (SELECT g, COUNT(*), a + 1 FROM t GROUP BY g) AS s")
    >>> name_outputs(q)
    >>> q.sql()
    'SELECT s.count FROM (SELECT g, COUNT(*) AS count, a + 1 AS "?column?" FROM t GROUP BY g) AS s'
    """
    for select in query.find_all(exp.Select):
        names = [_postgres_name(p) for p in select.expressions]
        for projection, name in zip(list(select.expressions), names, strict=True):
            if _named(projection) or names.count(name) != 1:
                continue
            projection.replace(exp.alias_(projection.copy(), _identifier(name)))


def _named(projection: exp.Expression) -> bool:
    return isinstance(projection, (exp.Alias, exp.Column, exp.Star))


def _identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=name != name.lower() or not name.isidentifier())


def _postgres_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Alias):
        return node.alias
    while isinstance(node, (exp.Cast, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Func):
        return node.sql("postgres").split("(", 1)[0].lower()
    return "?column?"
