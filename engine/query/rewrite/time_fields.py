"""``extract`` and ``date_part`` of the seconds of a timestamp or an interval, with the fraction.

DataFusion's ``date_part('second', x)`` drops the fraction (``07.25`` gives 7). Postgres 15's
``extract(second FROM x)`` is numeric with six decimals (``7.250000``), ``millisecond``
three (``7250.000``), ``microsecond`` none; ``date_part`` gives the same value as double
precision. These call ``kyma_timestamp_second`` / ``kyma_interval_second`` (``pg_interval``)
and scale their seconds. A difference of two timestamps is an interval. Applied by
``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites one
``extract`` whose typed twin ``applies``; ``DATE_PART`` marks a ``date_part`` call (the
kyma dialect's parser sets it).

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT extract(millisecond FROM INTERVAL '1.5 seconds')")
>>> node, typed = stmt.expressions[0], annotate_types(stmt.copy()).expressions[0]
>>> applies(typed), rule(node, typed).sql("postgres")
(True, "CAST(KYMA_INTERVAL_SECOND(ARROW_CAST(INTERVAL '1.5 SECONDS', 'Interval(MonthDayNano)')) \
* 1000 AS DECIMAL(38, 3))")
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query import pg_interval
from kyma.engine.query.rewrite import interval_arithmetic

DATE_PART = "date_part"
"""The arg an ``Extract`` parsed from ``date_part(…)`` carries (Postgres: double precision)."""
_T = exp.DataType.Type
_SCALES = {"SECOND": (1, 6), "MILLISECOND": (1000, 3), "MICROSECOND": (1_000_000, 0)}
_UNITS = {
    **{name: "SECOND" for name in ("SECOND", "SECONDS", "SEC", "SECS", "S")},
    **{name: "MILLISECOND" for name in ("MILLISECOND", "MILLISECONDS", "MS", "MSEC", "MSECS")},
    **{
        name: "MICROSECOND"
        for name in ("MICROSECOND", "MICROSECONDS", "US", "USEC", "USECS", "MICROSECON")
    },
}


def unit(node: exp.Extract) -> str | None:
    """SECOND, MILLISECOND or MICROSECOND when ``node`` extracts one of them, else None."""
    return _UNITS.get(node.this.name.upper())


def applies(typed: exp.Extract) -> bool:
    """Whether typed ``typed`` extracts seconds of a timestamp or an interval."""
    return unit(typed) is not None and _operand_kind(typed.expression) is not None


def rule(node: exp.Extract, typed: exp.Extract) -> exp.Expression:
    kind = _operand_kind(typed.expression)
    if kind == "interval":
        arrow, function = "Interval(MonthDayNano)", pg_interval.SECOND
    else:
        arrow, function = "Timestamp(Nanosecond, None)", pg_interval.TIMESTAMP_SECOND
    cast = exp.Anonymous(
        this="ARROW_CAST", expressions=[node.expression.copy(), exp.Literal.string(arrow)]
    )
    seconds: exp.Expression = exp.Anonymous(this=function.upper(), expressions=[cast])
    factor, scale = _SCALES[unit(node) or "SECOND"]
    if factor != 1:
        product = exp.Mul(this=seconds, expression=exp.Literal.number(factor))
        seconds = exp.cast(product, f"DECIMAL(38, {scale})")
    return exp.cast(seconds, "DOUBLE") if node.args.get(DATE_PART) else seconds


def _operand_kind(node: exp.Expression) -> str | None:
    """``'interval'`` or ``'timestamp'`` for typed ``node``, else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Sub) and _is_instant(node.left) and _is_instant(node.right):
        return "interval"
    if interval_arithmetic.is_interval(node):
        return "interval"
    return "timestamp" if _is_instant(node) else None


def _is_instant(node: exp.Expression) -> bool:
    kinds = (_T.TIMESTAMP, _T.TIMESTAMPTZ, _T.TIMESTAMPLTZ, _T.TIMESTAMP_NS, _T.DATETIME)
    return node.type is not None and node.type.this in kinds
