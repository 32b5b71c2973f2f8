"""A numeric quotient column of a statement with a LIMIT is written for the rows it returns.

``kyma_numeric_div_column`` (``quotient_columns``) writes each quotient with its own scale,
about 2 µs a row; in ``SELECT k, count(*) AS c, avg(x) FROM t GROUP BY k ORDER BY c DESC
LIMIT 10`` DataFusion would compute it for every group before keeping ten. So the statement
becomes a subquery that keeps the quotient's operands, and an outer SELECT divides the rows
the LIMIT kept, ordered again by the same keys (computed inside: a key may be an aggregate
the outer SELECT cannot see). The answer's columns keep their positions (its names are set
from the statement as written). Applied by ``postgres_semantics`` after ``quotient_columns``.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT k, count(*) AS c, KYMA_NUMERIC_DIV_COLUMN(s, n, u, v) AS a"
...                          " FROM t GROUP BY k ORDER BY c DESC LIMIT 10")
>>> print(rule(stmt).sql())
SELECT _kyma_late.k, _kyma_late.c, KYMA_NUMERIC_DIV_COLUMN(_kyma_late._kyma_l2_0, \
_kyma_late._kyma_l2_1, _kyma_late._kyma_l2_2, _kyma_late._kyma_l2_3) AS a FROM (SELECT k AS k, \
COUNT(*) AS c, s AS _kyma_l2_0, n AS _kyma_l2_1, u AS _kyma_l2_2, v AS _kyma_l2_3 FROM t \
GROUP BY k ORDER BY c DESC LIMIT 10) AS _kyma_late ORDER BY _kyma_late.c DESC
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.pg_numeric import DIV_COLUMN

_SUBQUERY = "_kyma_late"


def rule(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with its quotient columns divided after its LIMIT, when it has both."""
    if not isinstance(stmt, exp.Select) or not stmt.args.get("limit"):
        return stmt
    if stmt.args.get("distinct") or not any(_quotient(p) for p in stmt.expressions):
        return stmt
    inner = stmt.copy()
    ctes = inner.args.get("with_")
    inner.set("with_", None)
    outer_columns, extra = [], []
    for position, projection in enumerate(stmt.expressions):
        call = _quotient(projection)
        if call is None:
            name = (
                projection.alias_or_name if isinstance(projection, exp.Alias | exp.Column) else ""
            )
            name = name or f"_kyma_l{position}"
            inner.expressions[position].replace(exp.alias_(projection.unalias().copy(), name))
            outer_columns.append(exp.column(name, _SUBQUERY))
            continue
        names = [f"_kyma_l{position}_{i}" for i in range(len(call.expressions))]
        operands = [exp.alias_(a.copy(), n) for a, n in zip(call.expressions, names, strict=True)]
        inner.expressions[position].replace(operands[0])
        extra += operands[1:]
        divided = exp.Anonymous(
            this=call.name, expressions=[exp.column(n, _SUBQUERY) for n in names]
        )
        outer_columns.append(exp.alias_(divided, projection.alias) if projection.alias else divided)
    aliases = {p.alias: c for p, c in zip(stmt.expressions, outer_columns, strict=True) if p.alias}
    order = []
    for k, ordered in enumerate(stmt.args["order"].expressions if stmt.args.get("order") else ()):
        key = _outer_key(ordered.this, outer_columns, aliases)
        if key is not None and not isinstance(key, exp.Column):
            return stmt  # ordered by a quotient column itself: it is computed for every row
        if key is None:
            extra.append(exp.alias_(ordered.this.copy(), f"_kyma_o{k}"))
            key = exp.column(f"_kyma_o{k}", _SUBQUERY)
        order.append(
            exp.Ordered(
                this=key, desc=ordered.args.get("desc"), nulls_first=ordered.args.get("nulls_first")
            )
        )
    inner.set("expressions", [*inner.expressions, *extra])
    outer = exp.select(*outer_columns).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(_SUBQUERY)))
    )
    if order:
        outer.set("order", exp.Order(expressions=order))
    if ctes is not None:
        outer.set("with_", ctes)
    return outer


def _outer_key(
    key: exp.Expression, columns: list[exp.Expression], aliases: dict[str, exp.Expression]
) -> exp.Expression | None:
    """The outer SELECT's column an ORDER BY key names (a position or an output name), or None
    for a key the subquery must compute."""
    if isinstance(key, exp.Literal) and key.is_int:
        return columns[int(key.name) - 1]
    if isinstance(key, exp.Column) and not key.table and key.name in aliases:
        return aliases[key.name]
    return None


def _quotient(projection: exp.Expression) -> exp.Anonymous | None:
    call = projection.unalias()
    while isinstance(call, exp.Paren):
        call = call.this
    if isinstance(call, exp.Anonymous) and call.name.lower() == DIV_COLUMN:
        return call
    return None
