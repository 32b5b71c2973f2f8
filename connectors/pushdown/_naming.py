"""Output column names as Postgres gives them, in place of sqlglot's ``_col_N``.

qualify() names every unnamed output ``_col_N``; a federated answer should carry the names
the source would give (``count``, ``lower``, ``?column?``), as long as they stay unique.
"""

from __future__ import annotations

import re

from sqlglot import exp

_GENERATED = re.compile(r"_col_\d+")


def name_outputs(query: exp.Expression) -> None:
    """Rename the outermost block's generated aliases (and ORDER BY references to them).

    >>> from sqlglot import parse_one
    >>> q = parse_one("SELECT COUNT(*) AS _col_0, a + 1 AS _col_1 FROM t ORDER BY _col_0")
    >>> name_outputs(q)
    >>> q.sql()
    'SELECT COUNT(*) AS count, a + 1 AS "?column?" FROM t ORDER BY count'
    """
    if not isinstance(query, exp.Select):
        return
    generated = [p for p in query.expressions if isinstance(p, exp.Alias) and _is_generated(p)]
    taken = [p.alias_or_name for p in query.expressions if p not in generated]
    proposed = {id(p): _postgres_name(p.this) for p in generated}
    names = taken + list(proposed.values())
    renames = {}
    for projection in generated:
        name = proposed[id(projection)]
        if names.count(name) == 1:
            renames[projection.alias] = name
            projection.set("alias", _identifier(name))
    order = query.args.get("order")
    for column in order.find_all(exp.Column) if order else []:
        if not column.table and column.name in renames:
            column.replace(exp.Column(this=_identifier(renames[column.name])))


def _identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=name != name.lower() or not name.isidentifier())


def _is_generated(projection: exp.Alias) -> bool:
    return bool(_GENERATED.fullmatch(projection.alias))


def _postgres_name(node: exp.Expression) -> str:
    while isinstance(node, (exp.Cast, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Func):
        return node.sql("postgres").split("(", 1)[0].lower()
    return "?column?"
