"""``round`` of a float as Postgres does it, by operand type.

Postgres rounds a ``double precision`` (or ``real``) half to even (``rint``: ``round(2.5::float8)``
is 2, ``round(3.5::float8)`` 4) and a numeric half away from zero (``round(2.5)`` is 3);
DataFusion rounds every float half away from zero. A value halfway between two integers goes
to ``2 * round(x / 2)`` (even), any other to ``round(x)``. Postgres has no ``round(float, n)``:
it is refused as Postgres refuses it (42883). Applied by ``postgres_semantics`` (it types the
statement): ``rule(node, typed)`` rewrites one ``round`` whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT round(2.5::float8)")
>>> node = stmt.expressions[0]
>>> rule(node, annotate_types(stmt.copy()).expressions[0]).sql("postgres")
'CASE WHEN ABS(CAST(2.5 AS DOUBLE PRECISION) - TRUNC(CAST(2.5 AS DOUBLE PRECISION))) = 0.5 \
THEN 2 * ROUND(CAST(2.5 AS DOUBLE PRECISION) / 2) ELSE ROUND(CAST(2.5 AS DOUBLE PRECISION)) END'
>>> stmt = sqlglot.parse_one("SELECT round(2.5::float8, 1)")
>>> rule(stmt.expressions[0], annotate_types(stmt.copy()).expressions[0])
Traceback (most recent call last):
...
kyma.engine.errors.UndefinedFunctionError: function round(double precision, integer) does not exist
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import UndefinedFunctionError
from kyma.engine.query.rewrite.float_text import float_kind

_NAMES = {"float4": "real", "float8": "double precision"}


def applies(typed: exp.Round) -> bool:
    """Whether typed ``typed`` rounds a float (in Postgres's types)."""
    return float_kind(typed.this) is not None


def rule(node: exp.Round, typed: exp.Round) -> exp.Expression:
    """Half to even; UndefinedFunctionError for ``round(float, n)``."""
    if node.args.get("decimals") is not None:
        kind = float_kind(typed.this)
        assert kind is not None
        raise UndefinedFunctionError(f"function round({_NAMES[kind]}, integer) does not exist")
    return half_to_even(exp.cast(node.this.copy(), "DOUBLE"))


def half_to_even(value: exp.Expression) -> exp.Expression:
    """``value`` (a double) rounded to an integer as ``rint`` does."""
    trunc = exp.Anonymous(this="TRUNC", expressions=[value.copy()])
    fraction = exp.Abs(this=exp.Sub(this=value.copy(), expression=trunc))
    halfway = exp.EQ(this=fraction, expression=exp.Literal.number("0.5"))
    even = exp.Mul(
        this=exp.Literal.number(2),
        expression=exp.Round(this=exp.Div(this=value.copy(), expression=exp.Literal.number(2))),
    )
    return exp.case().when(halfway, even).else_(exp.Round(this=value.copy()))
