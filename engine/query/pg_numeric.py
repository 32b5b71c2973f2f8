"""Postgres's numeric division and average, for decimals evaluated in kyma.

DataFusion divides decimals with a fixed result scale and truncates; Postgres picks the scale
of every quotient from its operands (at least 16 significant digits, never fewer decimals
than either operand) and rounds half away from zero. A federated query whose division or
average stays residual must still give Postgres's answer, so both are registered on every
session: ``kyma_numeric_div(a, b)`` and the aggregate ``kyma_numeric_avg(x)``. The rewrite rule
``rewrite.numeric_division`` sends decimal operands to them.

Both return ``decimal128(38, 20)``: quotients rounded to Postgres's scale, so they compare
equal to Postgres's own (trailing zeros aside). A quotient that needs more than 20 decimals
(an average below 0.0001) or more than 18 integer digits raises rather than rounds.
"""

from __future__ import annotations

import decimal
import re
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import Accumulator, udaf, udf

from kyma.engine.errors import DivisionByZeroError, SqlError

RESULT = pa.decimal128(38, 20)
ARGUMENT = pa.decimal128(38, 10)
"""Operands arrive coerced to this type: 28 integer digits, 10 decimals (Postgres's
numeric(15,2), numeric(30,10) and their products fit)."""
_MIN_SIG_DIGITS = 16  # Postgres's NUMERIC_MIN_SIG_DIGITS
_CONTEXT = decimal.Context(prec=120, rounding=decimal.ROUND_HALF_UP)


def _weight_and_first_digit(value: Decimal) -> tuple[int, int]:
    """Postgres's base-10000 weight of ``value`` and its leading base-10000 digit.

    >>> _weight_and_first_digit(Decimal("14836.00"))
    (1, 1)
    >>> _weight_and_first_digit(Decimal("572"))
    (0, 572)
    >>> _weight_and_first_digit(Decimal("0.05"))
    (-1, 500)
    """
    if not value:
        return 0, 0
    magnitude = abs(value)
    weight = magnitude.adjusted() // 4
    first = int(magnitude.scaleb(-4 * weight, _CONTEXT))
    return weight, first


def _scale(value: Decimal) -> int:
    return max(0, -value.as_tuple().exponent)  # type: ignore[operator]


def divide(dividend: Decimal, divisor: Decimal) -> Decimal:
    """``dividend / divisor`` as Postgres's numeric_div computes it (select_div_scale).

    >>> divide(Decimal("14836.00"), Decimal("572"))
    Decimal('25.9370629370629371')
    >>> divide(Decimal("1"), Decimal("3"))
    Decimal('0.33333333333333333333')
    """
    if not divisor:
        raise DivisionByZeroError("division by zero")
    weight1, first1 = _weight_and_first_digit(dividend)
    weight2, first2 = _weight_and_first_digit(divisor)
    quotient_weight = weight1 - weight2 - (1 if first1 <= first2 else 0)
    scale = _MIN_SIG_DIGITS - quotient_weight * 4
    scale = min(max(scale, _scale(dividend), _scale(divisor), 0), 1000)
    return _CONTEXT.divide(dividend, divisor).quantize(Decimal(1).scaleb(-scale), context=_CONTEXT)


def _result(values: list[Decimal | None]) -> pa.Array:
    try:
        return pa.array(values, RESULT)
    except (pa.ArrowInvalid, decimal.InvalidOperation):
        raise SqlError(
            "a numeric quotient needs more than 20 decimals or 18 integer digits; push the"
            " division to the source or cast its operands"
        ) from None


def _declared_scale(arrow_type: pa.Array) -> int:
    """The scale in ``arrow_typeof``'s text: ``Decimal128(15, 2)`` → 2; integers → 0."""
    found = re.search(r"Decimal(?:128|256)\(\d+, (\d+)\)", str(arrow_type[0]))
    return int(found.group(1)) if found else 0


def _rescale(values: list[Decimal | None], scale: int) -> list[Decimal | None]:
    """Operands arrive at ARGUMENT's scale; back to their own (Postgres's dscale)."""
    unit = Decimal(1).scaleb(-scale)
    return [None if v is None else v.quantize(unit, context=_CONTEXT) for v in values]


def numeric_div(
    dividend: pa.Array, divisor: pa.Array, dividend_type: pa.Array, divisor_type: pa.Array
) -> pa.Array:
    """Row by row with Python decimals: only residual decimal divisions get here, and a
    pushed-down statement runs them at the source."""
    left = _rescale(dividend.to_pylist(), _declared_scale(dividend_type))
    right = _rescale(divisor.to_pylist(), _declared_scale(divisor_type))
    pairs = zip(left, right, strict=True)
    return _result([None if a is None or b is None else divide(a, b) for a, b in pairs])


class _Average(Accumulator):
    """An exact sum (Arrow's decimal sum) and a count; divided once per group."""

    def __init__(self) -> None:
        self.total = Decimal(0)
        self.count = 0
        self.scale = 0

    def update(self, values: pa.Array, declared: pa.Array) -> None:  # type: ignore[override]
        if len(declared):
            self.scale = max(self.scale, _declared_scale(declared))
        total = pc.sum(values.cast(pa.decimal256(76, ARGUMENT.scale))).as_py()
        if total is not None:
            self.total += total
        self.count += len(values) - values.null_count

    def merge(self, states: list[pa.Array]) -> None:  # type: ignore[override]
        totals, counts, scales = (s.to_pylist() for s in states)
        for total, count, scale in zip(totals, counts, scales, strict=True):
            self.total += Decimal(total)
            self.count += count
            self.scale = max(self.scale, scale)

    def state(self) -> list[pa.Scalar]:  # type: ignore[override]
        return [pa.scalar(str(self.total)), pa.scalar(self.count), pa.scalar(self.scale)]

    def evaluate(self) -> pa.Scalar:  # type: ignore[override]
        if not self.count:
            return pa.scalar(None, RESULT)
        # numeric_avg divides the sum (the inputs' scale) by the count (scale 0).
        total = self.total.quantize(Decimal(1).scaleb(-self.scale), context=_CONTEXT)
        return _result([divide(total, Decimal(self.count))])[0]


_DIV = udf(
    numeric_div,
    [ARGUMENT, ARGUMENT, pa.string(), pa.string()],
    RESULT,
    "immutable",
    name="kyma_numeric_div",
)
_AVG = udaf(
    _Average,
    [ARGUMENT, pa.string()],
    RESULT,
    [pa.string(), pa.int64(), pa.int64()],
    "immutable",
    name="kyma_numeric_avg",
)


FUNCTIONS = (_DIV, _AVG)
"""Built once; registered on each session by ``udfs.register``."""
