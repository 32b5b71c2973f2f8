"""A numeric quotient that becomes text is written with its own scale, as Postgres does.

``kyma_numeric_div`` answers one Arrow decimal column, whose scale is the same for every row
(20); Postgres gives each quotient its own (``14836.00 / 572`` is ``25.9370629370629371``,
``1 / 3.0`` is ``0.33333333333333333333``). Where a quotient (or an average, divided the same
way) becomes text — a cast to a text type, an operand of ``||``, an argument of ``concat``
/ ``concat_ws`` — it is ``kyma_numeric_div_text`` instead, with the same arguments. Applied
by ``postgres_semantics`` after it has written the quotients.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT CAST((KYMA_NUMERIC_DIV(a, b, c, d)) AS TEXT), "
...                          "KYMA_NUMERIC_DIV(a, b, c, d) || 'x', KYMA_NUMERIC_DIV(a, b, c, d)")
>>> rule(stmt).sql("postgres")
"SELECT KYMA_NUMERIC_DIV_TEXT(a, b, c, d), KYMA_NUMERIC_DIV_TEXT(a, b, c, d) || 'x', \
KYMA_NUMERIC_DIV(a, b, c, d)"
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.pg_numeric import DIV, DIV_TEXT

_T = exp.DataType.Type
_TEXT = {_T.TEXT, _T.VARCHAR, _T.CHAR, _T.NCHAR, _T.NVARCHAR, _T.BPCHAR}


def rule(stmt: exp.Expression) -> exp.Expression:
    for cast in list(stmt.find_all(exp.Cast)):
        if cast.to.this in _TEXT and not cast.to.expressions and _quotient(cast.this):
            cast.replace(_written(cast.this))
    for concat in list(stmt.find_all(exp.DPipe, exp.Concat, exp.ConcatWs)):
        operands = [concat.this, concat.expression] if isinstance(concat, exp.DPipe) else []
        for operand in operands or list(concat.expressions):
            if _quotient(operand):
                operand.replace(_written(operand))
    return stmt


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _quotient(node: exp.Expression) -> bool:
    node = _bare(node)
    return isinstance(node, exp.Anonymous) and node.name.lower() == DIV


def _written(node: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=DIV_TEXT.upper(), expressions=_bare(node).expressions)
