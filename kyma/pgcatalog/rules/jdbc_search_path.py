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


def rule(stmt: exp.Expression) -> exp.Expression:
    for join in list(stmt.find_all(exp.Join)):
        derived = join.this
        if not isinstance(derived, exp.Subquery) or "nspoid" not in derived.named_selects:
            continue
        alias = derived.alias_or_name
        select = join.parent
        join.pop()
        order = select.args.get("order") if select is not None else None
        for key in list(order.expressions) if order is not None else []:
            if any(column.table == alias for column in key.find_all(exp.Column)):
                key.pop()
        if order is not None and not order.expressions:
            order.pop()
    return stmt
