"""Vector columns by Arrow kernels: arrays of N numbers → FixedSizeList<float32, N>."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ._values import F32_OVERFLOW


def vectorized_vectors(array: pa.Array, dim: int) -> pa.Array | None:
    """The vectors of an inferred list column, rounded through float64 as Python does;
    None when some row needs Python (a wrong length, a non-number, a value beyond float32,
    or an integer 0, which may have been written ``-0``)."""
    if not pa.types.is_list(array.type):
        return None
    if not pc.all(pc.equal(pc.list_value_length(array), dim)).as_py():
        return None
    values = array.flatten()
    if values.null_count or values.type not in (pa.float64(), pa.int64()):
        return None
    if values.type == pa.int64() and pc.any(pc.equal(values, 0)).as_py():
        return None
    doubles = array.cast(pa.list_(pa.float64()), safe=False)  # rounds to nearest, as Python
    widest = pc.max(pc.abs(doubles.flatten())).as_py()
    if widest is None or widest >= F32_OVERFLOW:
        return None
    return doubles.cast(pa.list_(pa.float32(), dim))
