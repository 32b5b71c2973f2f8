"""The rows of a JSON answer written by Arrow kernels, with no Python object per value.

Each column becomes the JSON text of its values (integers and booleans as Arrow writes them,
text quoted and escaped, timestamps as RFC 3339 text, doubles and reals in the range where
Arrow's shortest form is orjson's; a real with float4's shortest digits, ``0.33333334``),
the columns are joined row by row and the rows into one array.
A small answer, a column of any other kind, or values outside those bounds make the answer
go the per-value way (``kyma.server.query.json_column``): the text is the same either way.
"""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.compute as pc

_NULL = pa.scalar("null")
SMALL = 1_024
"""Answers of at most this many values go the per-value way: the kernels cost about 1.5 ms
whatever the size (measured: 1.9 ms for one row, 0.09 ms per value), which is most of a
point query's time over HTTP."""
_SHORTEST = (1e-5, 1e9)
"""Finite doubles with magnitude in this range (and zero) are written by Arrow exactly as
orjson writes them, once integral ones get their ``.0``; outside it Arrow may use exponents
where orjson does not."""


def rows_json(table: pa.Table, timestamp_text) -> orjson.Fragment | None:  # type: ignore[no-untyped-def]
    """The ``rows`` of the answer as a JSON fragment, or None when a column needs the
    per-value path. ``timestamp_text`` renders a timestamp column as RFC 3339 strings."""
    if table.num_rows * table.num_columns <= SMALL:
        return None
    texts = []
    for field, column in zip(table.schema, table.columns, strict=True):
        if field.metadata:  # dynamic values and other kyma kinds: the per-value path
            return None
        text = _text(column.combine_chunks(), timestamp_text)
        if text is None:
            return None
        texts.append(text.fill_null(_NULL))
    rows = _joined("[", pc.binary_join_element_wise(*texts, ","), "]")
    whole = pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows)
    joined = pc.binary_join(whole, ",")
    return orjson.Fragment(b"[" + joined[0].as_buffer().to_pybytes() + b"]")


def _joined(*parts: pa.Array | str) -> pa.Array:
    """Element-wise concatenation of arrays and constant text."""
    return pc.binary_join_element_wise(*parts, "")


def _text(values: pa.Array, timestamp_text) -> pa.Array | None:  # type: ignore[no-untyped-def]
    dtype = values.type
    if pa.types.is_integer(dtype):
        return values.cast(pa.string())
    if pa.types.is_boolean(dtype):
        return pc.if_else(values, "true", "false")
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _quoted(values.cast(pa.string()))
    if pa.types.is_timestamp(dtype):
        return _quoted(pa.array(timestamp_text(pa.chunked_array([values])), pa.string()))
    if pa.types.is_float64(dtype) or pa.types.is_float32(dtype):
        return _double(values)  # a real's text has float4's shortest digits
    return None


def _quoted(values: pa.Array) -> pa.Array | None:
    """Text as JSON strings; None if it holds control characters (orjson's ``\\u00XX``)."""
    if pc.any(pc.match_substring_regex(values, r"[\x00-\x1f]")).as_py():
        return None
    escaped = pc.replace_substring(values, "\\", "\\\\")
    escaped = pc.replace_substring(escaped, '"', '\\"')
    return _joined('"', escaped, '"')


def _double(values: pa.Array) -> pa.Array | None:
    finite = pc.is_finite(values)
    size = pc.abs(values)
    lo, hi = _SHORTEST
    shortest = pc.or_(pc.equal(values, 0), pc.and_(pc.greater_equal(size, lo), pc.less(size, hi)))
    if not pc.all(pc.or_kleene(pc.invert(finite), shortest)).as_py():
        return None
    text = values.cast(pa.string())
    integral = pc.invert(pc.match_substring_regex(text, "[.en]"))
    text = pc.if_else(integral, _joined(text, ".0"), text)
    return pc.if_else(finite, text, pa.scalar(None, pa.string()))  # NaN, infinities: null
