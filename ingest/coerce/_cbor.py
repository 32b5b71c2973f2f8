"""CBOR of dynamic values built by Arrow kernels from pyarrow's inferred column.

The per-row path stores ``cbor2.dumps`` of the parsed JSON value. This module builds the
same bytes for a whole column at once -- map headers from counts of present keys, key
bytes as constants, string, integer and double values with CBOR heads computed in numpy,
all joined with ``binary_join_element_wise`` -- and says, per row, whether it can vouch
that they are byte-identical. It vouches only when every trap is ruled out:

- CBOR keeps a row's key order, a struct its own: the line must hold the JSON text of the
  keys of the struct and its nested structs (``"name"`` then ``:``, blanks between
  allowed) exactly as many times as the row has keys present, and no two of them in
  another order than theirs. A line with ``\\u``, ``\\"`` or ``\\/`` (where a key may be
  written otherwise, or a string hold a key's text) is not vouched for;
- pyarrow reads an explicit ``null`` and an absent key alike: the count above tells them
  apart (the key of a null is in the line but not present);
- a field of integers and floats is inferred double: an integral double may have been
  written ``2`` (an int in CBOR), so it is not vouched for;
- lists, timestamps and any other inferred type are not encoded here.

What it does not vouch for, the caller converts in Python as before. No library does this:
cbor2 and the other CBOR encoders take Python objects, and Arrow has no CBOR writer.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MAJOR_UINT, _MAJOR_NEGINT, _MAJOR_TEXT, _MAJOR_MAP = 0, 1, 3, 5
_FLOAT64 = 0xFB
_TRUE, _FALSE = pa.scalar(b"\xf5", pa.binary()), pa.scalar(b"\xf4", pa.binary())
_EMPTY = pa.scalar(b"", pa.binary())
_NULL = pa.scalar(None, pa.binary())
# Where a key's text in the line may differ from its canonical JSON text (or a string
# value may hold a key's text): such lines are left to Python.
_ODD_ESCAPE = r'\\[u"/]'
# What may stand between a key and its colon (JSON's blanks; a line holds no newline).
_COLON = r"[ \t\r]*:"
# The most keys (all levels) a column's struct may have for Arrow to encode it: the key
# checks' patterns grow with the keys (the counting order check with their square), and a
# bitmask of them names a row's shape; a wider, sparser struct is cheaper in Python.
MAX_KEYS = 32
# The most key shapes (which keys a row has) checked shape by shape, one pass over each
# shape's lines; past it, two passes over all lines, the costlier counting one among them.
MAX_SHAPES = 8


def encode_dynamic(array: pa.Array, lines: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(CBOR per row as binary, whether each row's CBOR is exact).

    A null row (absent or ``null``) is null and exact; an inexact row's value is meaningless.
    """
    valid = pc.is_valid(array)
    if _keys(array.type) > MAX_KEYS:
        return pa.nulls(len(array), pa.binary()), pc.invert(valid)
    pieces, ok, presence = _encode(array, lines)
    values = pieces[0] if len(pieces) == 1 else _join(pieces, "replace")
    if presence:
        present = np.column_stack(presence)
        ok = pc.and_(ok, _keys_once_in_order(_key_texts(array.type), present, lines))
    odd = pc.match_substring_regex(lines, _ODD_ESCAPE)
    ok = pc.and_(ok, pc.invert(pc.and_(valid, odd)))
    return pc.if_else(valid, values, pa.scalar(None, pa.binary())), ok


def _keys(kind: pa.DataType) -> int:
    if not pa.types.is_struct(kind):
        return 0
    return sum(1 + _keys(field.type) for field in kind)


def _key_texts(kind: pa.DataType) -> list[str]:
    """The JSON text (``"name"``) of every key of nested structs, depth first: the order
    a row holding them all writes them in (a struct's value sits between its key and the
    next)."""
    if not pa.types.is_struct(kind):
        return []
    texts = []
    for field in kind:
        texts += [json.dumps(field.name, ensure_ascii=False), *_key_texts(field.type)]
    return texts


def _encode(array: pa.Array, lines: pa.Array) -> tuple[list[pa.Array], pa.Array, list[np.ndarray]]:
    """(CBOR of each present value as pieces to join, each null where the value is absent
    -- the pieces of a struct's fields come after its map head, each field's after its key,
    so all of them join in one call at the end; whether each row is exact, but for its
    keys' order and count; which rows have each key of nested structs, depth first)."""
    kind = array.type
    valid = pc.is_valid(array)
    everywhere = pa.array(np.ones(len(array), np.bool_))
    if pa.types.is_null(kind):
        return [pa.nulls(len(array), pa.binary())], everywhere, []
    if pa.types.is_boolean(kind):
        return [pc.if_else(array, _TRUE, _FALSE)], everywhere, []
    if pa.types.is_int64(kind):
        return [_ints(array)], everywhere, []
    if pa.types.is_float64(kind):
        integral = pc.and_(valid, pc.equal(pc.floor(array), array))
        return [_doubles(array)], pc.invert(pc.fill_null(integral, False)), []
    if pa.types.is_string(kind):
        heads = _heads(_MAJOR_TEXT, _numpy(pc.binary_length(array)), valid)
        return [heads, array.cast(pa.binary())], everywhere, []
    if pa.types.is_struct(kind):
        return _struct(array, lines)
    return [pa.nulls(len(array), pa.binary())], pc.invert(valid), []  # lists etc.: Python's


def _struct(
    array: pa.StructArray, lines: pa.Array
) -> tuple[list[pa.Array], pa.Array, list[np.ndarray]]:
    """A struct's pieces: its map head (the count of keys present), then each present
    field's key and value (``struct_field`` makes a field null where its struct is)."""
    rows = len(array)
    ok = pa.array(np.ones(rows, np.bool_))
    count = np.zeros(rows, np.uint64)
    presence: list[np.ndarray] = []
    parts: list[pa.Array] = []
    for i, field in enumerate(array.type):
        child = pc.struct_field(array, [i])
        pieces, child_ok, nested = _encode(child, lines)
        key = field.name.encode()
        head = _heads(_MAJOR_TEXT, np.array([len(key)], np.uint64))[0].as_py()
        valid = pc.is_valid(child)
        parts += [pc.if_else(valid, pa.scalar(head + key, pa.binary()), _NULL), *pieces]
        here = valid.to_numpy(zero_copy_only=False)
        count += here.astype(np.uint64)
        presence += [here, *nested]
        ok = pc.and_(ok, child_ok)
    return [_heads(_MAJOR_MAP, count, pc.is_valid(array)), *parts], ok, presence


def _keys_once_in_order(texts: list[str], present: np.ndarray, lines: pa.Array) -> pa.Array:
    """Whether each line holds the key ``texts`` (of every nesting level, depth first) of
    the keys its row has ``present`` (rows × texts) once each, in that order, and no other:
    then each struct's keys are in its order, and a key holding null is told from one absent.

    A present key's text is in the line (lines with escapes are not vouched for). Rows are
    grouped by the keys they have (mostly one group: a serializer writes the same keys), and
    each group costs one pass over its lines, for what a good line cannot hold: an absent
    key's text, or a present key's text after its own or a later key's (as each is there,
    that leaves each once, in order)."""
    escaped = [re.escape(text) + _COLON for text in texts]
    codes = present.astype(np.uint64) @ (np.uint64(1) << np.arange(len(texts), dtype=np.uint64))
    shapes, shape_of = np.unique(codes, return_inverse=True)
    if len(shapes) > MAX_SHAPES or len(set(escaped)) < len(escaped):
        return _counted(escaped, present.sum(axis=1, dtype=np.uint64), lines)
    ok = np.zeros(len(codes), np.bool_)
    for shape in range(len(shapes)):
        rows = np.flatnonzero(shape_of == shape)
        subset = lines if len(shapes) == 1 else lines.take(rows)
        has = present[rows[0]]
        held = [text for text, there in zip(escaped, has, strict=True) if there]
        others = [text for text, there in zip(escaped, has, strict=True) if not there]
        again = [f"(?:{'|'.join(held[i:])}).*{text}" for i, text in enumerate(held)]
        bad = pc.match_substring_regex(subset, "|".join([*others, *again]))
        ok[rows] = pc.invert(bad).to_numpy(zero_copy_only=False)
    return pa.array(ok)


def _counted(escaped: list[str], present: np.ndarray, lines: pa.Array) -> pa.Array:
    """``_keys_once_in_order`` for rows of many shapes, or a name at two levels (whose rows
    then fail, as it cannot tell which came first): the texts counted (equal counts pair
    each occurrence with one present key) and no two found in the other order."""
    alternatives = "|".join(dict.fromkeys(escaped))
    found = pc.count_substring_regex(lines, alternatives).to_numpy(zero_copy_only=False)
    ok = pa.array(found.astype(np.uint64) == present)
    if len(escaped) < 2:
        return ok
    inversions = "|".join(
        f"(?:{'|'.join(escaped[i + 1 :])}).*{escaped[i]}" for i in range(len(escaped) - 1)
    )
    return pc.and_(ok, pc.invert(pc.match_substring_regex(lines, inversions)))


def _join(parts: list[pa.Array | pa.Scalar], nulls: str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, _EMPTY, null_handling=nulls)


def _numpy(array: pa.Array) -> np.ndarray:
    return array.fill_null(0).to_numpy(zero_copy_only=False)


def _ints(array: pa.Array) -> pa.Array:
    n = _numpy(array).astype(np.int64)
    negative = n < 0
    magnitude = np.where(negative, ~n, n).astype(np.uint64)  # -1 - n for a negative n
    heads = _heads(np.where(negative, _MAJOR_NEGINT, _MAJOR_UINT), magnitude)
    return pc.if_else(pc.is_valid(array), heads, pa.scalar(None, pa.binary()))


def _doubles(array: pa.Array) -> pa.Array:
    rows = len(array)
    data = np.empty((rows, 9), np.uint8)
    data[:, 0] = _FLOAT64
    data[:, 1:] = _numpy(array).astype(">f8").view(np.uint8).reshape(rows, 8)
    offsets = np.arange(0, 9 * rows + 1, 9, dtype=np.int32)
    encoded = pa.Array.from_buffers(
        pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())]
    )
    return pc.if_else(pc.is_valid(array), encoded, pa.scalar(None, pa.binary()))


def _heads(major: int | np.ndarray, n: np.ndarray, valid: pa.Array | None = None) -> pa.Array:
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
