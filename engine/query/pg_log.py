"""Postgres's ``log(b, x)`` of two numerics (``numeric.c``'s ``log_var``), for constants.

The result scale is Postgres's: at least 16 significant digits by an estimate of the
decimal weights of ``ln(b)`` and ``ln(x)`` (``estimate_ln_dweight``), never fewer decimals
than either argument; the quotient of the natural logarithms is computed with guard digits
and rounded half away from zero.

>>> from decimal import Decimal
>>> [str(log(Decimal(b), Decimal(x))) for b, x in [("2", "8"), ("10", "2"), ("2.0", "8")]]
['3.0000000000000000', '0.3010299956639812', '3.0000000000000000']
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

from kyma.engine.errors import DivisionByZeroError, InvalidLogarithmError

_MIN_SIG_DIGITS = 16  # NUMERIC_MIN_SIG_DIGITS
_MAX_DISPLAY_SCALE = 1000  # NUMERIC_MAX_DISPLAY_SCALE
_GUARD = 40


def log(base: Decimal, value: Decimal) -> Decimal:
    """``log(base, value)`` as Postgres's numeric ``log`` answers it."""
    for argument in (base, value):
        if argument == 0:
            raise InvalidLogarithmError("cannot take logarithm of zero")
        if argument < 0:
            raise InvalidLogarithmError("cannot take logarithm of a negative number")
    if base == 1:
        raise DivisionByZeroError("division by zero")
    scale = _MIN_SIG_DIGITS - (_ln_dweight(value) - _ln_dweight(base))
    scale = min(max(scale, _scale(base), _scale(value), 0), _MAX_DISPLAY_SCALE)
    with localcontext() as context:
        context.prec = scale + _GUARD + len(str(abs(value.adjusted()))) + 10
        quotient = value.ln() / base.ln()
        return quotient.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


def _scale(value: Decimal) -> int:
    return max(0, -int(value.as_tuple().exponent))


def _ln_dweight(value: Decimal) -> int:
    """``estimate_ln_dweight``: the decimal weight of ``ln(value)``, estimated from the
    first two base-10000 digits (or, near 1, from ``value - 1``)."""
    if Decimal("0.9") <= value <= Decimal("1.1"):
        near = value - 1
        return 0 if near == 0 else near.adjusted()
    digits, weight = _leading(value)
    ln = math.log(digits) + weight * 2.302585092994046
    return int(math.log10(abs(ln)))


def _leading(value: Decimal) -> tuple[int, int]:
    """The first two base-10000 digits of ``value`` (grouped from the decimal point) as one
    integer, and the decimal exponent of its last digit.

    >>> _leading(Decimal("14836.5")), _leading(Decimal("0.05"))
    ((14836, 0), (500, -4))
    """
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    shift = exponent % 4
    unscaled = int("".join(map(str, digits))) * 10**shift
    exponent -= shift  # a multiple of 4: the groups line up with the point
    groups = max(1, (len(str(unscaled)) + 3) // 4)
    leading = unscaled // 10000 ** max(0, groups - 2)
    return leading, exponent + 4 * max(0, groups - 2)
