"""``IN (subquery)`` and ``EXISTS`` outside WHERE, as counting scalar subqueries.

DataFusion 55 plans ``x IN (SELECT …)`` and ``EXISTS (…)`` only as filters (semi joins):
in a select list (``SELECT 1 IN (SELECT a FROM t)``) it fails with "Physical plan does not
support logical expression InSubquery". There they become scalar subqueries that count,
which DataFusion plans (and decorrelates) anywhere, with Postgres's three-valued answer:

- ``EXISTS (q)``: ``(SELECT count(*) FROM q) > 0``;
- ``x IN (q)``: TRUE when a row of ``q`` equals ``x``; else NULL when ``x`` is NULL and
  ``q`` has rows, or ``q`` holds a NULL; else FALSE (``NOT IN`` is its negation).

A plain ``SELECT … FROM … WHERE …`` subquery is counted in place (its correlation stays
where DataFusion finds it) when the compared value has no column (a column moved inside
could name one of the subquery's own); any other (GROUP BY, DISTINCT, LIMIT, a UNION …) is
counted as a derived table, whose one column it names ``_kyma_v``.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT 1 IN (SELECT a FROM t WHERE b > 0)", read="postgres")
>>> print(rule(stmt).sql("postgres"))
SELECT CASE WHEN (SELECT COUNT(*) FROM t WHERE b > 0 AND a = 1) > 0 THEN TRUE \
WHEN 1 IS NULL THEN CASE WHEN (SELECT COUNT(*) FROM t WHERE b > 0) = 0 THEN FALSE END \
WHEN (SELECT COUNT(*) FROM t WHERE b > 0 AND a IS NULL) > 0 THEN NULL ELSE FALSE END
>>> stmt = sqlglot.parse_one("SELECT NOT EXISTS (SELECT DISTINCT a FROM t) FROM u")
>>> print(rule(stmt).sql("postgres"))
SELECT NOT (SELECT COUNT(*) FROM (SELECT DISTINCT a FROM t) AS _kyma_q) > 0 FROM u
>>> where = sqlglot.parse_one("SELECT a FROM u WHERE a IN (SELECT a FROM t)")
>>> rule(where).sql() == where.sql()
True
"""

from __future__ import annotations

from sqlglot import exp

_SHAPED = ("group", "having", "limit", "offset", "distinct", "qualify", "windows", "order")
_VALUE = "_kyma_v"


def rule(stmt: exp.Expression) -> exp.Expression:
    found = [n for n in stmt.find_all(exp.In, exp.Exists) if _outside_filters(n)]
    for node in reversed(found):  # innermost first
        if isinstance(node, exp.Exists):
            query = node.this.unnest() if isinstance(node.this, exp.Subquery) else node.this
            if isinstance(query, exp.Query):
                node.replace(exp.GT(this=_count(query), expression=exp.Literal.number(0)))
        elif isinstance(node.args.get("query"), exp.Expression):
            query = node.args["query"]
            query = query.unnest() if isinstance(query, exp.Subquery) else query
            if isinstance(query, exp.Query) and _one_column(query):
                node.replace(_membership(node.this, query))
    return stmt


def _outside_filters(node: exp.Expression) -> bool:
    """Whether ``node`` sits outside every WHERE, HAVING and JOIN of its SELECT."""
    holder = node.find_ancestor(exp.Where, exp.Having, exp.Join, exp.Select)
    return isinstance(holder, exp.Select)


def _one_column(query: exp.Query) -> bool:
    return len(query.selects) == 1  # a ``*`` too: the engine checks what it expands to


def _membership(value: exp.Expression, query: exp.Query) -> exp.Expression:
    matches = _count(query, lambda v: exp.EQ(this=v, expression=value.copy()))
    nulls = _count(query, lambda v: exp.Is(this=v, expression=exp.Null()))
    rows = _count(query)
    when_null = exp.Case(ifs=[exp.If(this=exp.EQ(this=rows, expression=_zero()), true=exp.false())])
    return exp.Case(
        ifs=[
            exp.If(this=exp.GT(this=matches, expression=_zero()), true=exp.true()),
            exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=when_null),
            exp.If(this=exp.GT(this=nulls, expression=_zero()), true=exp.Null()),
        ],
        default=exp.false(),
    )


def _count(query: exp.Query, condition=None) -> exp.Subquery:  # type: ignore[no-untyped-def]
    """``(SELECT count(*) FROM query [WHERE condition(its value)])``."""
    star = exp.Count(this=exp.Star())
    moves = condition is None or not condition(exp.Null()).find(exp.Column)
    if moves and isinstance(query, exp.Select) and not any(query.args.get(k) for k in _SHAPED):
        plain = not query.selects[0].find(exp.AggFunc, exp.Window, exp.Star)
        if plain and query.args.get("from_") is not None:
            counted = query.copy()
            value = counted.selects[0].unalias()
            counted.set("expressions", [star])
            if condition is not None:
                counted.where(condition(value.copy()), copy=False)
            return counted.subquery()
    # IN: the one column is named by the derived table's column list, to compare it
    names = [exp.to_identifier(_VALUE)] if condition is not None else []
    alias = exp.TableAlias(this=exp.to_identifier("_kyma_q"), columns=names)
    derived = exp.select(star).from_(exp.Subquery(this=query.copy(), alias=alias))
    if condition is not None:
        derived.where(condition(exp.column(_VALUE, "_kyma_q")), copy=False)
    return derived.subquery()


def _zero() -> exp.Literal:
    return exp.Literal.number(0)
