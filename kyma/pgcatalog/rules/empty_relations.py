"""A SELECT that reads one of kyma's empty catalog relations (no indexes, constraints,
policies, triggers, inheritance, publications … : ``EMPTY``) in its FROM or an inner join,
and does not aggregate without GROUP BY, answers no rows: it becomes ``SELECT NULL::text AS
<name>, … WHERE FALSE``, its columns named as before (a column of an empty relation, or its
``unnest``, keeps its type: SQLAlchemy aggregates them). So the constructs such statements
use (psql's ``array(SELECT …)`` over ``pg_roles``, ``stxkind`` arrays) need no planning.
Applied to the statement, to derived tables (a client's describe probe wraps its statement)
and to the branches of their UNIONs.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT c.oid::regclass AS parent, i.inhseqno FROM pg_class c, pg_inherits i"
...     " WHERE c.oid = i.inhparent ORDER BY 1"
... )
>>> rule(stmt).sql("postgres")
'SELECT CAST(NULL AS TEXT) AS parent, CAST(NULL AS INT) AS inhseqno WHERE FALSE'
>>> outer = sqlglot.parse_one("SELECT r.k FROM (SELECT i.indkey AS k FROM pg_index i) r")
>>> rule(outer).sql("postgres")
'SELECT CAST(NULL AS TEXT) AS k WHERE FALSE'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog._empty import EMPTY, column_types
from kyma.pgcatalog.rules._tables import catalog_name, from_tables

_OUTER = {"RIGHT", "FULL"}


def rule(stmt: exp.Expression) -> exp.Expression:
    if not any(catalog_name(table) in EMPTY for table in stmt.find_all(exp.Table)):
        return stmt
    targets = [stmt] + [s.this for s in stmt.find_all(exp.Subquery) if _derived(s)]
    for query in list(targets):  # and the branches of their UNIONs
        while isinstance(query, exp.SetOperation):
            targets.append(query.expression)
            query = query.this
        targets.append(query)
    for select in sorted(targets, key=_depth, reverse=True):  # inner ones first
        if isinstance(select, exp.Select) and no_rows(select):
            empty = _empty_select(select)
            if select is stmt:
                return empty
            select.replace(empty)
    return stmt


def _depth(node: exp.Expression) -> int:
    depth, parent = 0, node.parent
    while parent is not None:
        depth, parent = depth + 1, parent.parent
    return depth


def _derived(subquery: exp.Subquery) -> bool:
    return isinstance(subquery.parent, exp.From | exp.Join)


def no_rows(select: exp.Select) -> bool:
    """Whether ``select`` reads an empty relation in its FROM or an inner join, and does not
    aggregate without GROUP BY: it answers no rows."""
    joins = select.args.get("joins") or []
    if any(join.side.upper() in _OUTER for join in joins):
        return False
    source = select.args.get("from_")
    inner = [source.this] if source is not None else []
    inner += [join.this for join in joins if not join.side]
    if not any(catalog_name(t) in EMPTY or _emptied(t) for t in inner):
        return False
    aggregates = any(
        call.parent_select is select for p in select.expressions for call in p.find_all(exp.AggFunc)
    )
    return not aggregates or select.args.get("group") is not None


def _emptied(source: exp.Expression) -> bool:
    """Whether ``source`` is a derived table this rule made empty (JDBC's getPrimaryKeys
    reads its keys from one)."""
    select = source.this if isinstance(source, exp.Subquery) else None
    if not isinstance(select, exp.Select) or select.args.get("from_"):
        return False
    where = select.args.get("where")
    return where is not None and where.this == exp.false()


def _empty_select(select: exp.Select) -> exp.Select:
    typed = _typed_columns(select)
    names: list[str] = []  # as written, unique (the answer takes the statement's names)
    columns = []
    for position, projection in enumerate(select.expressions, 1):
        name = projection.alias_or_name
        names.append(name if name and name not in names else f"column{position}")
        kind = _type_of(projection.unalias(), typed) or "text"
        columns.append(exp.alias_(exp.cast(exp.null(), kind, dialect="postgres"), names[-1]))
    return exp.select(*columns).where(exp.false())


def _typed_columns(select: exp.Select) -> dict[tuple[str, str], str]:
    """(table alias or '', column) → SQL type, for the empty relations ``select`` reads."""
    typed = {}
    for table in from_tables(select):
        relation = catalog_name(table)
        if relation in EMPTY:
            for column, kind in column_types(relation).items():
                typed[(table.alias_or_name, column)] = typed[("", column)] = kind
    return typed


def _type_of(node: exp.Expression, typed: dict[tuple[str, str], str]) -> str | None:
    if isinstance(node, exp.Column):
        return typed.get((node.table, node.name))
    if isinstance(node, exp.Unnest) and len(node.expressions) == 1:
        kind = _type_of(node.expressions[0], typed)
        return kind.removesuffix("[]") if kind and kind.endswith("[]") else None
    return None
