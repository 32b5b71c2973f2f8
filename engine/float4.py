"""Postgres's range check of a ``real`` (float4) over Arrow arrays, for the query engine's
casts and for values stored in a ``real`` column (ingest, COPY, INSERT): a finite value
beyond float4's range is 22003 ``overflow``, a non-zero one that rounds to zero 22003
``underflow``, as Postgres's ``float84`` refuses them; Arrow makes them infinity and zero.

>>> float4(pa.array([1.5, None]), pa.array([1.5, None], pa.float32())).to_pylist()
[1.5, None]
>>> float4(pa.array([1e39]), pa.array([float("inf")], pa.float32()))
Traceback (most recent call last):
...
kyma.engine.errors.OutOfRangeError: value out of range: overflow
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.errors import OutOfRangeError

_FLOAT4 = pa.float32()


def float4(doubles: pa.Array, reals: pa.Array) -> pa.Array:
    """``reals`` (the values cast to real), or OutOfRangeError where ``doubles`` (the same
    values cast to double) lie beyond float4's range, as Postgres refuses them."""
    wide = doubles.to_numpy(zero_copy_only=False)
    narrow = reals.to_numpy(zero_copy_only=False)
    finite = np.isfinite(wide)
    if (finite & np.isinf(narrow)).any():
        raise OutOfRangeError("value out of range: overflow")
    if (finite & (wide != 0) & (narrow == 0)).any():
        raise OutOfRangeError("value out of range: underflow")
    return reals


def narrowed(values: pa.Array) -> pa.Array:
    """``values`` (numbers, or text read as Postgres reads a real) as reals; OutOfRangeError
    (22003) for one beyond float4's range, as Postgres refuses it in a real column.

    >>> narrowed(pa.array([0.1, None])).to_pylist()
    [0.10000000149011612, None]
    >>> narrowed(pa.array(["1e-46"]))
    Traceback (most recent call last):
    ...
    kyma.engine.errors.OutOfRangeError: value out of range: underflow
    """
    if pa.types.is_float32(values.type):
        return values
    doubles = pc.cast(values, pa.float64(), safe=False)
    direct = pa.types.is_integer(values.type) or pa.types.is_string(values.type)
    return float4(doubles, pc.cast(values if direct else doubles, _FLOAT4, safe=False))
