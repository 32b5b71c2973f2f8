"""Which rows of pyarrow's inferred dynamic column hold exactly their JSON line's value.

The per-row path stores ``cbor2.dumps`` of the parsed JSON value; ``arrow_cbor.cbor``
(engine/format) builds the same bytes for a whole column of pyarrow's parse at once. This
module says, per row, whether those bytes are the line's -- ``vouched`` -- which lets the
extent writer take a row's paths and leaves from the parse, and encode CBOR only for what
it stores whole (coercion's batch then holds no bytes for those rows: ``_fast._dynamic``).
It vouches only when every trap is ruled out:

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

What it does not vouch for, the caller converts in Python as before.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format.arrow_cbor import cbor
from kyma.engine.native.json_keys import in_order

_ENCODED = (pa.null(), pa.bool_(), pa.int64(), pa.string())
"""Types whose values ``cbor`` writes as the JSON text held them (and doubles, checked)."""
# Where a key's text in the line may differ from its canonical JSON text (or a string
# value may hold a key's text): such lines are left to Python.
_ODD_ESCAPE = r'\\[u"/]'
# The most keys (all levels) a column's struct may have for Arrow to encode it: the key
# check compares each key a line writes with every key's text, and a wider, sparser struct
# is cheaper in Python.
MAX_KEYS = 32


def encode_dynamic(array: pa.Array, lines: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(CBOR per row as binary, whether each row's CBOR is exact).

    A null row (absent or ``null``) is null and exact; an inexact row's value is meaningless.
    """
    exact = vouched(array, lines)
    if not pc.any(pc.and_(exact, pc.is_valid(array))).as_py():
        return pa.nulls(len(array), pa.binary()), exact
    return cbor(array), exact


def vouched(array: pa.Array, lines: pa.Array) -> pa.Array:
    """Per row, whether ``cbor`` of its value (``array``, pyarrow's parse of ``lines``)
    is the CBOR of its line's value, byte for byte: a null row is."""
    valid = pc.is_valid(array)
    if _keys(array.type) > MAX_KEYS:
        return pc.invert(valid)
    ok, presence = _checks(array)
    if presence:
        present = np.column_stack(presence)
        ok = pc.and_(ok, _keys_once_in_order(_key_texts(array.type), present, lines))
    odd = pc.match_substring_regex(lines, _ODD_ESCAPE)
    return pc.and_(ok, pc.invert(pc.and_(valid, odd)))


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


def _checks(array: pa.Array) -> tuple[pa.Array, list[np.ndarray]]:
    """Whether each row is exact, but for its keys' order and count; which rows have each
    key of nested structs, depth first."""
    kind = array.type
    if pa.types.is_float64(kind):
        integral = pc.and_(pc.is_valid(array), pc.equal(pc.floor(array), array))
        return pc.invert(pc.fill_null(integral, False)), []
    if not pa.types.is_struct(kind):
        if kind in _ENCODED:
            return pa.array(np.ones(len(array), np.bool_)), []
        return pc.invert(pc.is_valid(array)), []  # lists etc.: Python's
    ok = pa.array(np.ones(len(array), np.bool_))
    presence: list[np.ndarray] = []
    for i in range(kind.num_fields):
        child = pc.struct_field(array, [i])  # null where its struct is
        child_ok, nested = _checks(child)
        presence += [pc.is_valid(child).to_numpy(zero_copy_only=False), *nested]
        ok = pc.and_(ok, child_ok)
    return ok, presence


def _keys_once_in_order(texts: list[str], present: np.ndarray, lines: pa.Array) -> pa.Array:
    """Whether each line writes the key ``texts`` (of every nesting level, depth first) of
    the keys its row has ``present`` (rows × texts) once each, in that order, and no other
    of them: then each struct's keys are in its order, and a key holding null is told from
    one absent. One compiled pass over the lines (``json_keys.in_order``)."""
    lines = lines.cast(pa.large_string())  # as the layout cuts them: no copy
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, np.int64)[lines.offset : lines.offset + len(lines) + 1]
    texts_bytes = [text.encode() for text in texts]
    data = np.frombuffer(data or b"", np.uint8)
    return pa.array(in_order(data, bounds, texts_bytes, np.ascontiguousarray(present, np.uint8)))
