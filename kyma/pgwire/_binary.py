"""Arrow columns in Postgres' binary format, for clients that ask for binary results
(asyncpg always, psycopg with ``binary=True``): the ``*send`` encodings of each type OID
``_types.type_oid`` gives, as one large_binary array a column (null for NULL), or
fixed_size_binary for a fixed-width column without NULLs.

Fixed-width types, JSONB and arrays of fixed-width elements are packed by numpy and Arrow
kernels for the whole column; numerics, intervals and other arrays per value.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.pgwire import _types as t

POSTGRES_EPOCH_DAYS = 10_957  # 2000-01-01 - 1970-01-01
POSTGRES_EPOCH_MICROS = POSTGRES_EPOCH_DAYS * 86_400_000_000
# type OID → (Arrow type to cast to, numpy big-endian dtype)
_FIXED = {
    t.INT2: (pa.int16(), ">i2"),
    t.INT4: (pa.int32(), ">i4"),
    t.INT8: (pa.int64(), ">i8"),
    t.FLOAT4: (pa.float32(), ">f4"),
    t.FLOAT8: (pa.float64(), ">f8"),
}
_NULL = pa.scalar(None, pa.large_binary())
_ELEMENT = {array: element for element, array in t.ARRAY_OF.items()}


def binary_column(field: pa.Field, column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Every value of ``column`` in the binary format of ``type_oid(field)``."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    oid = t.type_oid(field)
    dtype = field.type
    if oid in _FIXED:
        arrow, packed = _FIXED[oid]
        return _packed(array, array.cast(arrow), packed)
    if oid == t.BOOL:
        return _packed(array, array.cast(pa.uint8()), ">u1")
    if oid in (t.TIMESTAMP, t.TIMESTAMPTZ):
        micros = array.cast(pa.timestamp("us", dtype.tz), safe=False).cast(pa.int64())
        return _packed(array, pc.subtract(micros, POSTGRES_EPOCH_MICROS), ">i8")
    if oid == t.DATE:
        days = array.cast(pa.date32()).cast(pa.int32())
        return _packed(array, pc.subtract(days, POSTGRES_EPOCH_DAYS), ">i4")
    if oid == t.TIME:
        return _packed(array, array.cast(pa.time64("us"), safe=False).cast(pa.int64()), ">i8")
    if oid == t.BYTEA:
        return array.cast(pa.large_binary())
    if oid in _ELEMENT and not pa.types.is_struct(dtype):
        return _arrays(array, _ELEMENT[oid], dtype.value_type)
    text = t.text_column(field, pa.chunked_array([array], dtype))
    if oid == t.JSONB:  # version 1, then the JSON text (NULL stays NULL)
        version = pa.scalar(b"\x01", pa.large_binary())
        return pc.binary_join_element_wise(version, text, pa.scalar(b"", pa.large_binary()))
    if oid == t.NUMERIC:
        return _per_value(text, lambda v: numeric(Decimal(v.decode())))
    if oid == t.INTERVAL:
        return _per_value(array, _interval_of(dtype))
    return text  # text's binary format is its text


def _packed(original: pa.Array, values: pa.Array, dtype: str) -> pa.Array:
    """``values`` as fixed-width big-endian cells, null where ``original`` is: a
    fixed_size_binary array when no value is NULL (DataRows take its bytes as they are)."""
    data = values.fill_null(0).to_numpy(zero_copy_only=False).astype(dtype)
    width = data.dtype.itemsize
    cells = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(data), [None, pa.py_buffer(data)]
    )
    if original.null_count == 0:
        return cells
    return pc.if_else(pc.is_valid(original), cells.cast(pa.large_binary()), _NULL)


def _per_value(array: pa.Array, encode: Callable[[Any], bytes]) -> pa.Array:
    values = [None if v is None else encode(v) for v in array.to_pylist()]
    return pa.array(values, pa.large_binary())


def _arrays(array: pa.Array, element_oid: int, element_type: pa.DataType) -> pa.Array:
    """One-dimensional arrays: ndim, has-null flag, element OID, length, lower bound 1,
    then each element's length (-1: NULL) and bytes."""
    flat = pc.list_flatten(array)
    if element_oid in _FIXED and flat.null_count == 0:
        return _fixed_arrays(array, flat, element_oid)
    elements = binary_column(pa.field("e", element_type), flat).to_pylist()
    offsets = pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False).cumsum()
    values: list[bytes | None] = []
    start = 0
    for valid, end in zip(pc.is_valid(array).to_pylist(), offsets.tolist(), strict=True):
        if not valid:
            values.append(None)
            continue
        items = elements[start:end]
        start = end
        if not items:
            values.append(struct.pack("!iii", 0, 0, element_oid))
            continue
        has_null = any(v is None for v in items)
        parts = [struct.pack("!iiiii", 1, int(has_null), element_oid, len(items), 1)]
        for item in items:
            parts.append(b"\xff\xff\xff\xff" if item is None else _cell(item))
        values.append(b"".join(parts))
    return pa.array(values, pa.large_binary())


def _fixed_arrays(array: pa.Array, flat: pa.Array, element_oid: int) -> pa.Array:
    """``_arrays`` of fixed-width elements, none NULL, built by numpy for the whole column:
    each row's 20-byte header, then its elements as (width, value) cells, back to back."""
    arrow, packed = _FIXED[element_oid]
    values = flat.cast(arrow).to_numpy(zero_copy_only=False).astype(packed)
    cells = np.empty(len(values), [("length", ">i4"), ("value", packed)])
    cells["length"], cells["value"] = values.dtype.itemsize, values
    counts = pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False)
    header = np.empty(len(array), [(f, ">i4") for f in ("ndim", "nulls", "oid", "count", "low")])
    header["ndim"], header["nulls"], header["oid"] = 1, 0, element_oid
    header["count"], header["low"] = counts, 1
    sizes = header.dtype.itemsize + counts.astype(np.int64) * cells.dtype.itemsize
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    data = np.empty(int(offsets[-1]), np.uint8)
    head = offsets[:-1, None] + np.arange(header.dtype.itemsize)
    data[head.ravel()] = header.view(np.uint8)
    body = np.ones(len(data), bool)
    body[head.ravel()] = False
    data[body] = cells.view(np.uint8)
    rows = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(array), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    empty = pa.scalar(struct.pack("!iii", 0, 0, element_oid), pa.large_binary())
    rows = pc.if_else(pc.equal(pa.array(counts), 0), empty, rows)
    return pc.if_else(pc.is_valid(array), rows, _NULL) if array.null_count else rows


def _cell(value: bytes) -> bytes:
    return struct.pack("!i", len(value)) + value


def numeric(value: Decimal) -> bytes:
    """numeric_send: digit count, weight, sign, display scale, then base-10000 digits.

    >>> numeric(Decimal("1.50")).hex(), numeric(Decimal("-12345")).hex()
    ('000200000000000200011388', '000200014000000000010929')
    """
    if value.is_nan():
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    if value.is_infinite():
        return struct.pack("!hhHh", 0, 0, 0xF000 if value < 0 else 0xD000, 0)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    text = "".join(map(str, digits)).zfill(-exponent)
    if exponent > 0:
        text += "0" * exponent
        exponent = 0
    integer, fraction = text[: len(text) + exponent] or "0", text[len(text) + exponent :]
    integer = integer.zfill((len(integer) + 3) // 4 * 4)
    fraction = fraction.ljust((len(fraction) + 3) // 4 * 4, "0")
    groups = [int(integer[i : i + 4]) for i in range(0, len(integer), 4)]
    weight = len(groups) - 1
    groups += [int(fraction[i : i + 4]) for i in range(0, len(fraction), 4)]
    while groups and groups[0] == 0:  # leading zero groups lower the weight
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    head = struct.pack("!hhHh", len(groups), weight, 0x4000 if sign else 0, scale)
    return head + struct.pack(f"!{len(groups)}h", *groups)


def _interval_of(dtype: pa.DataType) -> Callable[[Any], bytes]:
    """interval_send: microseconds, days, months."""
    if pa.types.is_interval(dtype):
        return lambda v: struct.pack("!qii", v.nanoseconds // 1000, v.days, v.months)
    return lambda v: struct.pack("!qii", v // dt.timedelta(microseconds=1), 0, 0)
