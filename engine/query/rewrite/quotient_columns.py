"""A numeric quotient returned as a result column is written with each value's own scale.

``kyma_numeric_div`` answers one Arrow decimal column, one scale for every row (20);
Postgres gives each quotient its own (``14836.00 / 572`` is ``25.9370629370629371``). A
quotient (or an average, divided the same way) that is a result column of the outermost
SELECT is ``kyma_numeric_div_column`` instead: Postgres's text of each value, in a column
marked numeric that the result encoders send as numeric. An ``ORDER BY`` naming the column
(by position or alias) sorts by the quotient itself. Left as decimals: a ``DISTINCT``
select, or a column ``GROUP BY`` names (text would tell apart ``1.2`` and ``1.20``, which
Postgres groups as one), and set operations. Applied by ``postgres_semantics`` after it has
written the quotients.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT g, KYMA_NUMERIC_DIV(a, b, c, d) AS q FROM t ORDER BY q",
...                          read="postgres")
>>> rule(stmt).sql("postgres")
'SELECT g, KYMA_NUMERIC_DIV_COLUMN(a, b, c, d) AS q FROM t ORDER BY KYMA_NUMERIC_DIV(a, b, c, d)'
>>> rule(sqlglot.parse_one("SELECT DISTINCT KYMA_NUMERIC_DIV(a, b, c, d) FROM t")).sql()
'SELECT DISTINCT KYMA_NUMERIC_DIV(a, b, c, d) FROM t'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.pg_numeric import DIV, DIV_COLUMN


def rule(stmt: exp.Expression) -> exp.Expression:
    if not isinstance(stmt, exp.Select) or stmt.args.get("distinct"):
        return stmt
    group, order = stmt.args.get("group"), stmt.args.get("order")
    for position, projection in enumerate(stmt.expressions, 1):
        call = _bare(projection.unalias())
        if not (isinstance(call, exp.Anonymous) and call.name.lower() == DIV):
            continue
        names = _names(position, projection)
        if group is not None and any(
            _names_it(k, names, call) for k in group.find_all(exp.Expression)
        ):
            continue
        for ordered in order.expressions if order is not None else ():
            if _names_it(ordered.this, names, None):
                ordered.set("this", call.copy())
        call.replace(exp.Anonymous(this=DIV_COLUMN.upper(), expressions=call.expressions))
    return stmt


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _names(position: int, projection: exp.Expression) -> tuple[str, str | None]:
    return str(position), projection.alias if isinstance(projection, exp.Alias) else None


def _names_it(
    key: exp.Expression, names: tuple[str, str | None], call: exp.Expression | None
) -> bool:
    """Whether a GROUP BY or ORDER BY item is the column's position or alias (or, given
    ``call``, the quotient itself)."""
    if isinstance(key, exp.Literal) and key.is_int:
        return key.name == names[0]
    if isinstance(key, exp.Column) and not key.table:
        return key.name == names[1]
    return call is not None and key == call
