"""CBOR of Arrow-parsed JSON values, built by Arrow kernels and numpy for a whole column.

pyarrow's inferred column of a dynamic field (``_parsed.ParsedDynamic.values``) holds the
values typed: a struct per object, its fields in its own order. ``cbor`` writes the bytes
``cbor2.dumps`` writes for each row's value -- map heads from counts of present keys, key
bytes as constants, string, integer and double values with heads computed in numpy, all
joined with ``binary_join_element_wise``. It does not check that a row's value is what its
JSON line held (key order, explicit nulls, integral doubles): ingest's coercion vouches for
the rows whose bytes these are (``ingest/coerce/_cbor.py``). No library does this: cbor2
and the other CBOR encoders take Python objects, and Arrow has no CBOR writer.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAJOR_UINT, MAJOR_NEGINT, MAJOR_TEXT, MAJOR_MAP = 0, 1, 3, 5
_FLOAT64 = 0xFB
_TRUE, _FALSE = pa.scalar(b"\xf5", pa.binary()), pa.scalar(b"\xf4", pa.binary())
_EMPTY = pa.scalar(b"", pa.binary())
_NULL = pa.scalar(None, pa.binary())


def cbor(array: pa.Array) -> pa.Array:
    """Each value's CBOR as binary, null where the value is. Values of types JSON does not
    parse to (lists, timestamps: pyarrow infers them) encode as nothing: ingest never
    vouches for a row holding one."""
    pieces = _pieces(array)
    values = pieces[0] if len(pieces) == 1 else _join(pieces)
    return pc.if_else(pc.is_valid(array), values, _NULL)


def _pieces(array: pa.Array) -> list[pa.Array]:
    """The CBOR of each present value as pieces to join, each null where the value is
    absent: a struct's map head, then per field its key and its value's pieces (a field
    is null where its struct is), so all of them join in one call at the end."""
    kind = array.type
    if pa.types.is_null(kind):
        return [pa.nulls(len(array), pa.binary())]
    if pa.types.is_boolean(kind):
        return [pc.if_else(array, _TRUE, _FALSE)]
    if pa.types.is_int64(kind):
        return [_ints(array)]
    if pa.types.is_float64(kind):
        return [_doubles(array)]
    if pa.types.is_string(kind):
        heads = heads_of(MAJOR_TEXT, _numpy(pc.binary_length(array)), pc.is_valid(array))
        return [heads, array.cast(pa.binary())]
    if pa.types.is_struct(kind):
        return _struct(array)
    return [pa.nulls(len(array), pa.binary())]


def _struct(array: pa.StructArray) -> list[pa.Array]:
    count = np.zeros(len(array), np.uint64)
    parts: list[pa.Array] = []
    for i, field in enumerate(array.type):
        child = pc.struct_field(array, [i])
        key = field.name.encode()
        head = heads_of(MAJOR_TEXT, np.array([len(key)], np.uint64))[0].as_py()
        valid = pc.is_valid(child)
        parts += [pc.if_else(valid, pa.scalar(head + key, pa.binary()), _NULL), *_pieces(child)]
        count += valid.to_numpy(zero_copy_only=False).astype(np.uint64)
    return [heads_of(MAJOR_MAP, count, pc.is_valid(array)), *parts]


def _join(parts: list[pa.Array]) -> pa.Array:
    return pc.binary_join_element_wise(*parts, _EMPTY, null_handling="replace")


def _numpy(array: pa.Array) -> np.ndarray:
    return array.fill_null(0).to_numpy(zero_copy_only=False)


def _ints(array: pa.Array) -> pa.Array:
    n = _numpy(array).astype(np.int64)
    negative = n < 0
    magnitude = np.where(negative, ~n, n).astype(np.uint64)  # -1 - n for a negative n
    heads = heads_of(np.where(negative, MAJOR_NEGINT, MAJOR_UINT), magnitude)
    return pc.if_else(pc.is_valid(array), heads, _NULL)


def _doubles(array: pa.Array) -> pa.Array:
    rows = len(array)
    data = np.empty((rows, 9), np.uint8)
    data[:, 0] = _FLOAT64
    data[:, 1:] = _numpy(array).astype(">f8").view(np.uint8).reshape(rows, 8)
    offsets = np.arange(0, 9 * rows + 1, 9, dtype=np.int32)
    encoded = pa.Array.from_buffers(
        pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())]
    )
    return pc.if_else(pc.is_valid(array), encoded, _NULL)


def heads_of(major: int | np.ndarray, n: np.ndarray, valid: pa.Array | None = None) -> pa.Array:
    """CBOR heads (major type, argument ``n`` in the fewest bytes) as a binary array, null
    where ``valid`` (a mask without nulls) is false."""
    n = n.astype(np.uint64)
    if not len(n) or n.max() < 24:  # one byte each: the usual short strings and maps
        data = (np.left_shift(np.asarray(major, np.uint64), np.uint64(5)) | n).astype(np.uint8)
        offsets = np.arange(len(n) + 1, dtype=np.int32)
        return _binary(offsets, data, valid)
    widths = [(24, 0, 0), (256, 1, 24), (65536, 2, 25), (2**32, 4, 26)]
    extra = np.full(len(n), 8, np.int32)
    info = np.full(len(n), 27, np.uint64)
    for bound, width, code in reversed(widths):
        small = n < np.uint64(bound)
        extra[small] = width
        info[small] = n[small] if width == 0 else code
    offsets = np.zeros(len(n) + 1, np.int32)
    np.cumsum(extra + 1, out=offsets[1:])
    data = np.zeros(int(offsets[-1]), np.uint8)
    start = offsets[:-1]
    data[start] = (np.left_shift(np.asarray(major, np.uint64), 5) | info).astype(np.uint8)
    for width in (1, 2, 4, 8):
        chosen = extra == width
        if not chosen.any():
            continue
        for b in range(width):
            shift = np.uint64(8 * (width - 1 - b))
            data[start[chosen] + 1 + b] = ((n[chosen] >> shift) & np.uint64(0xFF)).astype(np.uint8)
    return _binary(offsets, data, valid)


def _binary(offsets: np.ndarray, data: np.ndarray, valid: pa.Array | None) -> pa.Array:
    """A binary array of ``data`` cut at ``offsets``, null where ``valid`` (a mask without
    nulls, of the same length) is false: its bitmap is the validity bitmap."""
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    if valid is None:
        return pa.Array.from_buffers(pa.binary(), len(offsets) - 1, buffers)
    if valid.offset:  # a bitmap must start at the array's first row
        return pc.if_else(valid, pa.Array.from_buffers(pa.binary(), len(valid), buffers), _NULL)
    return pa.Array.from_buffers(pa.binary(), len(valid), [valid.buffers()[1], *buffers[1:]])
