"""Correlated scalar subqueries of any comparison, as DataFusion can plan them: by equality.

DataFusion 55 turns a correlated aggregate subquery into a join only when it is correlated by
equalities (``x.k = t.k``); ``(SELECT count(*) FROM t AS x WHERE x.b < t.b)`` fails with
"Physical plan does not support logical expression ScalarSubquery". The subquery is
rewritten to range over the *domain* of the outer values it reads — ``SELECT DISTINCT t.b
FROM t``, a superset of the values it is ever evaluated for — joined to its own FROM, with
each outer value replaced by the domain's and one equality tying the domain to the outer
row: ``(SELECT count(*) FROM t AS x, (SELECT DISTINCT o.b AS k0 FROM t AS o) AS d WHERE
x.b < d.k0 AND d.k0 = t.b)``. Its value for each outer row is unchanged, and DataFusion
decorrelates the equality (and answers ``count`` 0 where no row matches).

Rewritten only where that is exactly Postgres's answer: an aggregate without GROUP BY, LIMIT
or OFFSET (one row, always), whose outer values appear only in WHERE conjuncts that are
comparisons of columns, literals, ``+``, ``-`` and ``*`` (an outer NULL makes them false, as
the equality does, and none can fail for a domain value no outer row has).
Anything else is left as written, for DataFusion to plan or refuse.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT (SELECT count(*) FROM t AS x WHERE x.b < t.b) FROM t", read="postgres")
>>> print(rule(stmt, {"t": {"b": "INT"}}).sql("postgres"))
SELECT (SELECT COUNT(*) AS _col_0 FROM t AS x, (SELECT DISTINCT _kyma_o0.b AS k0_0 FROM t AS \
_kyma_o0) AS _kyma_d0 WHERE x.b < _kyma_d0.k0_0 AND _kyma_d0.k0_0 = t.b) AS _col_0 FROM t AS t
>>> equal = sqlglot.parse_one("SELECT (SELECT max(x.b) FROM t AS x WHERE x.b = t.b) FROM t")
>>> rule(equal, {"t": {"b": "INT"}}) is equal
True
"""

from __future__ import annotations

from itertools import count

import sqlglot.errors
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_STRICT = (
    *(exp.Column, exp.Identifier, exp.Literal, exp.Paren, exp.Neg),
    *(exp.Add, exp.Sub, exp.Mul),
)


def rule(stmt: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    """``schema``: ``{table: {column: SQL type}}`` of the tables ``stmt`` reads."""
    if not any(_scalar(s) for s in stmt.find_all(exp.Subquery)):
        return stmt
    try:
        qualified = qualify(stmt.copy(), schema=schema, dialect="postgres", quote_identifiers=False)
        scopes = traverse_scope(qualified)
    except (sqlglot.errors.SqlglotError, KeyError, ValueError, AssertionError):
        return stmt
    numbers = count()
    rewritten = False
    for scope in scopes:
        if _rewritable(scope):
            rewritten |= _over_domain(scope, numbers)
    return qualified if rewritten else stmt


def _scalar(subquery: exp.Subquery) -> bool:
    return not isinstance(subquery.parent, exp.From | exp.Join | exp.In | exp.Exists | exp.Lateral)


def _rewritable(scope: Scope) -> bool:
    select = scope.expression
    if scope.scope_type != ScopeType.SUBQUERY or not isinstance(select, exp.Select):
        return False
    if not isinstance(select.parent, exp.Subquery) or not _scalar(select.parent):
        return False
    if not scope.external_columns or len(select.expressions) != 1:
        return False
    if any(select.args.get(k) for k in ("group", "having", "limit", "offset", "distinct")):
        return False
    value = select.expressions[0]
    if not value.find(exp.AggFunc) or value.find(exp.Window) or not select.args.get("from_"):
        return False
    where = select.args.get("where")
    if where is None:
        return False
    conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    outer = {id(c) for c in scope.external_columns}
    seen = 0
    equalities = True
    for conjunct in conjuncts:
        found = [c for c in conjunct.find_all(exp.Column) if id(c) in outer]
        if not found:
            continue
        if not isinstance(conjunct, _COMPARISONS):
            return False
        if not all(isinstance(n, _STRICT) for side in conjunct.args.values() for n in side.walk()):
            return False
        sides = (id(conjunct.this) in outer, id(conjunct.expression) in outer)
        equalities &= isinstance(conjunct, exp.EQ) and len(found) == 1 and any(sides)
        seen += len(found)
    # Every outer value in WHERE; and DataFusion decorrelates pure equalities itself.
    return seen == len(scope.external_columns) and not equalities


def _over_domain(scope: Scope, numbers: count) -> bool:  # type: ignore[type-arg]
    """Rewrite one subquery to range over its outer values' domain; False when an outer
    value's source cannot be copied (the subquery is then left as it is)."""
    select = scope.expression
    by_source: dict[str, list[exp.Column]] = {}
    for column in scope.external_columns:
        by_source.setdefault(column.table, []).append(column)
    domains = []
    for table, columns in by_source.items():
        source = _outer_source(scope, table)
        if source is None:
            return False
        domains.append((source, columns))
    conditions = []
    for source, columns in domains:
        n = next(numbers)
        copy_alias, domain_alias = f"_kyma_o{n}", f"_kyma_d{n}"
        copied = source.copy()
        alias = copied.args.get("alias")
        columns_alias = alias.args.get("columns") if alias is not None else None
        renamed = exp.TableAlias(this=exp.to_identifier(copy_alias), columns=columns_alias)
        copied.set("alias", renamed)
        keys: dict[str, str] = {}
        for column in columns:
            # Unique across domains: DataFusion confuses two domains' keys of one name.
            keys.setdefault(column.name, f"k{n}_{len(keys)}")
        domain = exp.select(
            *(exp.alias_(exp.column(name, copy_alias), key) for name, key in keys.items())
        ).from_(copied)
        domain.set("distinct", exp.Distinct())
        select.append("joins", exp.Join(this=domain.subquery(domain_alias)))
        for name, key in keys.items():
            outer = columns[[c.name for c in columns].index(name)].copy()
            conditions.append(exp.EQ(this=exp.column(key, domain_alias), expression=outer))
        for column in columns:
            column.replace(exp.column(keys[column.name], domain_alias))
    select.where(*conditions, copy=False)
    return True


def _outer_source(scope: Scope, table: str) -> exp.Expression | None:
    """The FROM item (a table or a derived table) that ``table`` names in an outer scope."""
    parent = scope.parent
    while parent is not None:
        found = parent.selected_sources.get(table)
        if found is not None:
            node = found[0]
            if isinstance(node, exp.Query) and isinstance(node.parent, exp.Subquery):
                node = node.parent  # a derived table: its query's parenthesized node
            return node if isinstance(node, exp.Table | exp.Subquery) else None
        parent = parent.parent
    return None
