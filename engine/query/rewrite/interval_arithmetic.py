"""``interval * n``, ``n * interval`` and ``interval / n`` as Postgres computes them.

DataFusion has no product or quotient of an interval and a number; Postgres multiplies each
field by the number (as double precision) and cascades fractions of months into days and of
days into time. These call ``kyma_interval_mul`` / ``kyma_interval_div`` (``pg_interval``).
Applied by ``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites one
operation whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT 2 * INTERVAL '1 hour'", read="postgres")
>>> node, typed = stmt.expressions[0], annotate_types(stmt.copy()).expressions[0]
>>> applies(typed), rule(node, typed).sql("postgres")
(True, "KYMA_INTERVAL_MUL(ARROW_CAST(INTERVAL '1 HOUR', 'Interval(MonthDayNano)'), \
CAST(2 AS DOUBLE PRECISION))")
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query import pg_interval

_T = exp.DataType.Type
_NUMBERS = {*exp.DataType.INTEGER_TYPES, *exp.DataType.REAL_TYPES}


def applies(typed: exp.Mul | exp.Div) -> bool:
    """Whether typed ``typed`` multiplies or divides an interval by a number."""
    if _is_interval(typed.left) and _is_number(typed.right):
        return True
    return isinstance(typed, exp.Mul) and _is_number(typed.left) and _is_interval(typed.right)


def rule(node: exp.Mul | exp.Div, typed: exp.Mul | exp.Div) -> exp.Expression:
    interval, factor = node.left, node.right
    if not _is_interval(typed.left):
        interval, factor = factor, interval
    kind = exp.Literal.string("Interval(MonthDayNano)")
    function = pg_interval.MUL if isinstance(node, exp.Mul) else pg_interval.DIV
    return exp.Anonymous(
        this=function.upper(),
        expressions=[
            exp.Anonymous(this="ARROW_CAST", expressions=[interval.copy(), kind]),
            exp.cast(factor.copy(), "DOUBLE"),
        ],
    )


def is_interval(node: exp.Expression) -> bool:
    """Whether typed ``node`` is an interval, a product or quotient of one too (sqlglot
    types ``interval * 0.5`` as a number)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Mul | exp.Div) and applies(node):
        return True
    return _is_interval(node)


def _is_interval(node: exp.Expression) -> bool:
    return node.type is not None and node.type.this == _T.INTERVAL


def _is_number(node: exp.Expression) -> bool:
    return node.type is not None and node.type.this in _NUMBERS
