"""The JDBC driver ranks types by their schema's place in the search path: a LEFT JOIN of a
derived table ``sp`` (``nspoid``, rank ``r``, from ``generate_series`` over the path) and an
``ORDER BY sp.r``. Every kyma type is in pg_catalog, so the join and the rank go.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT typname FROM pg_type LEFT JOIN (SELECT ns.oid AS nspoid, r FROM pg_namespace"
...     " AS ns) AS sp ON sp.nspoid = typnamespace WHERE typname = 'x' ORDER BY sp.r, typname",
...     read="postgres",
... )
>>> rule(stmt).sql("postgres")
"SELECT typname FROM pg_type WHERE typname = 'x' ORDER BY typname"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    gone: list[tuple[exp.Expression, exp.Expression | None]] = []
    for join in list(stmt.find_all(exp.Join)):
        derived = join.this
        if not isinstance(derived, exp.Subquery) or "nspoid" not in derived.named_selects:
            continue
        alias = derived.alias_or_name
        gone.append((join, None))
        order = join.parent.args.get("order") if join.parent is not None else None
        for key in order.expressions if order is not None else []:
            if any(column.table == alias for column in key.find_all(exp.Column)):
                gone.append((key, None))
    replace_all(gone)
    for order in list(stmt.find_all(exp.Order)):
        if not order.expressions:
            order.pop()
    return stmt
