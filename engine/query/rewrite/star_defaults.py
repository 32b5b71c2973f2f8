"""``*`` without the default columns where they would make a Postgres statement fail.

A kyma table's ``*`` holds its default columns ``_timestamp`` and ``props`` first, then the
declared ones. Two places need ``*`` to mean the declared columns only, as in the table
Postgres would hold: a subquery that must give one column (``1 IN (SELECT * FROM t)``, a
scalar subquery) and a SELECT with GROUP BY (``SELECT DISTINCT * FROM t GROUP BY a, b``,
where the default columns are not grouped). There, each ``*`` over a kyma table is spelled
out as its declared columns.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 1 IN (SELECT * FROM t), * FROM t AS u GROUP BY a, b")
>>> print(rule(stmt, {"t": ["a", "b"]}).sql())
SELECT 1 IN (SELECT t.a, t.b FROM t), u.a, u.b FROM t AS u GROUP BY a, b
>>> print(rule(sqlglot.parse_one("SELECT * FROM t"), {"t": ["a"]}).sql())
SELECT * FROM t
"""

from __future__ import annotations

from sqlglot import exp


def rule(stmt: exp.Expression, declared: dict[str, list[str]]) -> exp.Expression:
    """``declared``: each kyma table's declared columns, by the name ``stmt`` reads it by."""
    for select in list(stmt.find_all(exp.Select)):
        if _one_column(select) or select.args.get("group"):
            _spell_out(select, declared)
    return stmt


def _one_column(select: exp.Select) -> bool:
    holder = select.parent
    if isinstance(holder, exp.In):
        return True
    if isinstance(holder, exp.Subquery):
        return not isinstance(holder.parent, exp.From | exp.Join | exp.Exists | exp.Lateral)
    return False


def _spell_out(select: exp.Select, declared: dict[str, list[str]]) -> None:
    sources = _sources(select)
    projections: list[exp.Expression] = []
    for projection in select.expressions:
        if isinstance(projection, exp.Star):
            for alias, table in sources:
                projections += _columns(alias, table, declared) or [exp.column(exp.Star(), alias)]
        elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
            named = [(a, t) for a, t in sources if a == projection.table]
            found = _columns(*named[0], declared) if named else None
            projections += found or [projection]
        else:
            projections.append(projection)
    select.set("expressions", projections)


def _sources(select: exp.Select) -> list[tuple[str, exp.Expression]]:
    """(alias, FROM item) of each table the SELECT reads, in order."""
    found = []
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    for item in items:
        found.append((item.alias_or_name, item))
    return found


def _columns(
    alias: str, item: exp.Expression, declared: dict[str, list[str]]
) -> list[exp.Expression] | None:
    if not isinstance(item, exp.Table) or item.name not in declared:
        return None
    return [exp.column(name, alias) for name in declared[item.name]]
