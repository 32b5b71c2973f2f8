"""A scalar subquery that looks one catalog row up by its OID (SQLAlchemy's ``(SELECT
typcollation FROM pg_type WHERE pg_type.oid = pg_attribute.atttypid)``) takes ``max`` of its
one value: the OID is the relation's key, so at most one row matches and the value is the
same, and DataFusion plans a correlated subquery only when it aggregates.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT (SELECT t.typcollation FROM pg_type t WHERE t.oid = a.atttypid) FROM a")
>>> rule(stmt).sql("postgres")
'SELECT (SELECT MAX(t.typcollation) FROM pg_type AS t WHERE t.oid = a.atttypid) FROM a'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tables import catalog_name, from_tables

_KEYED_BY_OID = {"pg_type", "pg_class", "pg_namespace", "pg_database", "pg_collation", "pg_am"}


def rule(stmt: exp.Expression) -> exp.Expression:
    for subquery in list(stmt.find_all(exp.Subquery)):
        select = subquery.this
        if isinstance(subquery.parent, exp.From | exp.Join | exp.In | exp.Exists | exp.Array):
            continue  # a derived table or a set, not a value
        if _by_oid(select):
            (value,) = select.expressions
            name = value.alias if isinstance(value, exp.Alias) else None
            aggregated = exp.Max(this=value.unalias().copy())
            value.replace(exp.alias_(aggregated, name) if name else aggregated)
    return stmt


def _by_oid(select: exp.Expression) -> bool:
    """One value, from one catalog relation keyed by OID, its WHERE ``<relation>.oid = …``."""
    tables = from_tables(select)
    if len(tables) != 1 or catalog_name(tables[0]) not in _KEYED_BY_OID:
        return False
    assert isinstance(select, exp.Select)
    if len(select.expressions) != 1 or select.expressions[0].find(exp.AggFunc):
        return False
    if any(select.args.get(k) for k in ("group", "having", "distinct", "limit", "offset")):
        return False
    where = select.args.get("where")
    if where is None:
        return False
    names = {tables[0].alias_or_name, ""}
    conjuncts = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
    return any(
        isinstance(c, exp.EQ)
        and any(
            isinstance(side, exp.Column) and side.name == "oid" and side.table in names
            for side in (c.this, c.expression)
        )
        for c in conjuncts
    )
