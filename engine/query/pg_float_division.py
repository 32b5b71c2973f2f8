"""Postgres's float division by zero, over Arrow arrays: ``x / 0`` of a ``real`` or a
``double precision`` is 22012 in Postgres (``float8div``, ``float4div``), where DataFusion
answers ``Infinity`` or ``NaN``.

``kyma_float8_divisor(dividend, divisor)`` (and ``kyma_float4_divisor`` for reals) is the
divisor itself, or DivisionByZeroError where a row divides by zero. As in Postgres, a NaN
dividend divided by zero is NaN, and a null on either side is null, not an error.
``rewrite.float_division`` puts it around the divisor of every float division.

>>> divisor(pa.array([1.0, None, float("nan")]), pa.array([2.0, 0.0, 0.0])).to_pylist()
[2.0, 0.0, 0.0]
>>> divisor(pa.array([1.0, 3.0]), pa.array([2.0, 0.0]))
Traceback (most recent call last):
...
kyma.engine.errors.DivisionByZeroError: division by zero
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from datafusion import udf

from kyma.engine.errors import DivisionByZeroError


def divisor(dividends: pa.Array, divisors: pa.Array) -> pa.Array:
    """``divisors``, or DivisionByZeroError where one is zero and its dividend is a number."""
    by = divisors.to_numpy(zero_copy_only=False)  # a null is NaN here: never zero
    if (by == 0).any():
        of = dividends.to_numpy(zero_copy_only=False)  # NaN: a NaN or a null dividend
        if ((by == 0) & ~np.isnan(of)).any():
            raise DivisionByZeroError("division by zero")
    return divisors


FLOAT8 = "kyma_float8_divisor"
FLOAT4 = "kyma_float4_divisor"
FUNCTIONS = (
    udf(divisor, [pa.float64(), pa.float64()], pa.float64(), "immutable", name=FLOAT8),
    udf(divisor, [pa.float32(), pa.float32()], pa.float32(), "immutable", name=FLOAT4),
)
