"""Postgres's ``real`` (float4) where DataFusion's Float32 answers otherwise, over Arrow arrays.

- ``kyma_float4_sum(real)``: ``sum`` of reals is a real accumulated in float4, each step
  rounded (Postgres's ``float4pl``); DataFusion sums Float32 in a double (a thousand
  ``0.1::real`` sum to ``99.99905`` in Postgres, ``100`` so). A step that overflows is
  ``22003`` as there.
- ``kyma_float4(double, real)``: a cast to real that refuses a finite value beyond float4's range
  (overflow) or one that rounds to zero (underflow), as Postgres's ``float84`` does;
  DataFusion makes them infinity and zero.

>>> total = Float4Sum()
>>> total.update(pa.array([0.1] * 1000, pa.float32()))
>>> str(np.float32(total.evaluate().as_py()))
'99.99905'
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datafusion import Accumulator, udaf, udf

from kyma.engine.errors import OutOfRangeError
from kyma.engine.float4 import float4

_FLOAT4 = pa.float32()


class Float4Sum(Accumulator):
    """The running float4 sum of the non-null values seen (null until there is one)."""

    def __init__(self) -> None:
        self._sum: np.float32 | None = None

    def update(self, *values: pa.Array) -> None:
        numbers = pc.drop_null(values[0]).to_numpy(zero_copy_only=False).astype(np.float32)
        if not len(numbers):
            return
        if self._sum is not None:
            numbers = np.concatenate(([self._sum], numbers))
        with np.errstate(over="ignore", invalid="ignore"):
            steps = np.cumsum(numbers, dtype=np.float32)  # sequential: rounded at each step
        if np.isinf(steps).any() and np.isfinite(numbers).all():
            raise OutOfRangeError("value out of range: overflow")
        self._sum = steps[-1]

    def merge(self, states: list[pa.Array]) -> None:
        self.update(states[0])

    def state(self) -> list[pa.Scalar]:
        return [self.evaluate()]

    def evaluate(self) -> pa.Scalar:
        return pa.scalar(self._sum, _FLOAT4)


SUM = "kyma_float4_sum"
CAST = "kyma_float4"
FUNCTIONS = (
    udaf(Float4Sum, [_FLOAT4], _FLOAT4, [_FLOAT4], "immutable", name=SUM),
    udf(float4, [pa.float64(), _FLOAT4], _FLOAT4, "immutable", name=CAST),
)
