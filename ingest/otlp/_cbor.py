"""The CBOR of attribute maps and events for a whole request at once, by Arrow kernels.

Protobuf messages can only be read in Python, so each attribute costs a few attribute reads
in list comprehensions (its key, its value, the value's kind, then the value by kind). The
CBOR is not built per value: strings, integers, doubles and booleans get their heads from
ingest/coerce's numpy encoders, keys are encoded once per distinct key, and the pairs of a
record are joined by ``binary_join`` over offsets. The bytes are those ``cbor2.dumps`` makes
of ``attributes()``'s dict (``_values``), which stays the path for the rare cases: nested
values, bytes, non-finite doubles (one ``cbor2.dumps`` per value) and a key repeated within
one record (the whole map, to keep its first place and last value).
"""

from __future__ import annotations

from typing import Any

import cbor2
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.ingest.coerce._cbor import _doubles, _heads, _ints

from ._values import any_value, attributes

_MAJOR_UINT, _MAJOR_TEXT, _MAJOR_ARRAY, _MAJOR_MAP = 0, 3, 4, 5
_EMPTY = pa.scalar(b"", pa.binary())
_NULL = pa.scalar(None, pa.binary())
_TRUE, _FALSE, _NONE = (pa.scalar(b, pa.binary()) for b in (b"\xf5", b"\xf4", b"\xf6"))
_EMPTY_MAP = pa.scalar(b"\xa0", pa.binary())


def join(*parts: pa.Array | pa.Scalar) -> pa.Array:
    """Row by row concatenation of binary arrays and scalars; null where any part is."""
    return pc.binary_join_element_wise(*parts, _EMPTY, null_handling="emit_null")


def texts(array: pa.Array) -> pa.Array:
    """CBOR text strings of a string array (nulls stay null)."""
    heads = _heads(_MAJOR_TEXT, pc.binary_length(array).fill_null(0).to_numpy())
    return join(heads, array.cast(pa.binary()))


def key(name: str) -> bytes:
    """The CBOR of one map key."""
    return cbor2.dumps(name)


def attribute_maps(rows: list[Any], *, empty_as_null: bool = True) -> pa.Array:
    """Each record's repeated ``KeyValue`` as the CBOR of a map; a record without attributes
    is null (``empty_as_null``) or the empty map."""
    counts = np.fromiter(map(len, rows), np.int64, len(rows))
    pairs = [kv for row in rows for kv in row]
    keys = pa.array([kv.key for kv in pairs], pa.string()).dictionary_encode()
    encoded_keys = texts(keys.dictionary).take(keys.indices)
    values = any_values([kv.value for kv in pairs])
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, join(encoded_keys, values)), _EMPTY)
    maps = join(_heads(_MAJOR_MAP, counts), joined)
    if empty_as_null:
        maps = pc.if_else(pa.array(counts > 0), maps, _NULL)
    repeated = _rows_repeating_a_key(keys.indices, counts, len(keys.dictionary))
    if len(repeated):
        patched = maps.to_pylist()
        for row in repeated:
            patched[row] = cbor2.dumps(attributes(rows[row]))
        maps = pa.array(patched, pa.binary())
    return maps


def _rows_repeating_a_key(indices: pa.Array, counts: np.ndarray, distinct: int) -> np.ndarray:
    """The rows holding some key more than once (rare: OTLP says keys are unique)."""
    if len(indices) == 0:
        return np.zeros(0, np.int64)
    row_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    pairs = np.sort(row_of * max(distinct, 1) + indices.to_numpy(zero_copy_only=False))
    twice = pairs[1:][pairs[1:] == pairs[:-1]]
    return np.unique(twice // max(distinct, 1))


def _finite_doubles(values: list[float]) -> pa.Array:
    doubles = np.array(values, np.float64)
    if np.isfinite(doubles).all():
        return _doubles(pa.array(doubles))
    return pa.array([cbor2.dumps(d) for d in values], pa.binary())  # cbor2's NaN, infinities


# The value kinds encoded by Arrow kernels, from a list of one kind's values.
_ENCODERS = {
    "string_value": lambda values: texts(pa.array(values, pa.string())),
    "int_value": lambda values: _ints(pa.array(values, pa.int64())),
    "bool_value": lambda values: pc.if_else(pa.array(values, pa.bool_()), _TRUE, _FALSE),
    "double_value": _finite_doubles,
}


def any_values(values: list[Any]) -> pa.Array:
    """The CBOR of each ``AnyValue`` (as ``cbor2.dumps(any_value(v))`` makes it)."""
    kinds = [v.WhichOneof("value") for v in values]
    kind_of = np.array(kinds, dtype=object)
    pieces: list[pa.Array] = []
    places: list[np.ndarray] = []
    for kind in set(kinds):
        places.append(np.flatnonzero(kind_of == kind))
        if kind in _ENCODERS:
            of_kind = [getattr(v, kind) for v, k in zip(values, kinds, strict=True) if k == kind]
            pieces.append(_ENCODERS[kind](of_kind))
        elif kind is None:
            pieces.append(pa.repeat(_NONE, len(places[-1])))
        else:  # bytes, lists and maps: rare
            rare = [cbor2.dumps(any_value(values[i])) for i in places[-1]]
            pieces.append(pa.array(rare, pa.binary()))
    if not pieces:
        return pa.array([], pa.binary())
    order = np.argsort(np.concatenate(places), kind="stable")
    return pa.concat_arrays(pieces).take(pa.array(order))


def arrays(items: pa.Array, counts: np.ndarray, *, empty_as_null: bool = True) -> pa.Array:
    """Per row, the CBOR array of its ``counts`` consecutive encoded ``items``."""
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    joined = pc.binary_join(pa.ListArray.from_arrays(offsets, items), _EMPTY)
    out = join(_heads(_MAJOR_ARRAY, counts), joined)
    return pc.if_else(pa.array(counts > 0), out, _NULL) if empty_as_null else out


def uints(values: list[int]) -> pa.Array:
    """CBOR unsigned integers (up to 2**64 - 1: fixed64 fields)."""
    return _heads(_MAJOR_UINT, np.array(values, np.uint64))
