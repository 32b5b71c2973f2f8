"""The fast path: one ``pyarrow.json.read_json`` of the whole body, then vectorized checks.

Scalar columns are read with an explicit Arrow type. Every other field is inferred, and its
inferred column mostly just says which rows hold a value: per-row Python runs only on those
rows, and only for what Arrow cannot produce exactly (dynamic values, props, and vectors or
strings of unusual shapes). When inference fails (a dynamic field that is a number in one
row and an object in the next), pyarrow reads the scalar columns alone and Python parses
every line for the rest. Whenever the result could differ from the slow reader's, these
functions return None and the caller runs the slow reader, which also words every error:
this path never raises IngestError.
"""

from __future__ import annotations

import codecs
import functools
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from kyma.engine.errors import IngestError, OutOfRangeError
from kyma.engine.float4 import narrowed
from kyma.engine.format import ParsedDynamic
from kyma.engine.types import TIMESTAMP, Column

from ._cbor import encode_dynamic, vouched
from ._json import is_int, parse_checked, parse_line
from ._layout import Layout, layout
from ._lines import Lines
from ._model import Coerced
from ._slow import assemble
from ._values import convert_rows
from ._vector import vectorized_vectors

_NO_BYTES = pa.scalar(b"", pa.binary())
_EXPLICIT = {"bool": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "real": pa.float64()}
_EXPLICIT["float4"] = pa.float64()  # narrowed after its range is checked


def coerce_fast(
    body: bytes,
    columns: Sequence[Column],
    props_fields: frozenset[str],
    ingest_time_ns: int,
    scanned: Lines | None = None,
    deferred: bool = False,
) -> Coerced | None:
    """The coerced body, or None when only the slow reader can tell; ``scanned``, the
    body's lines as ``check_shape`` returns them; ``deferred`` as ``coerce_ndjson`` takes it."""
    if body.startswith(codecs.BOM_UTF8):
        body, scanned = body[len(codecs.BOM_UTF8) :], None  # the lines moved
    lines = layout(body, scanned)
    if lines is None:
        return None
    try:
        first = parse_line(lines.first, 1)
    except IngestError:
        return None
    explicit = {c.name: t for c in columns if (t := _read_type(c, first.get(c.name)))}
    schema = pa.schema(list(explicit.items()))
    table = _read(body, schema, lines, "infer")
    inferred = table is not None
    table = table or _read(body, schema, lines, "ignore")
    if table is None:
        return None
    arrays: dict[str, pa.Array] = {}
    partial: dict[str, tuple[pa.Array, pa.Array]] = {}
    parsed: dict[str, ParsedDynamic] = {}
    for column in columns:
        if column.name in explicit:
            array = table.column(column.name).combine_chunks()
            if column.type.name == "float4":
                try:
                    array = narrowed(array)
                except OutOfRangeError:
                    return None  # the slow reader names the line
            arrays[column.name] = array.cast(column.type.to_arrow())  # int64 → epoch-ns
        elif inferred and column.name == "props" and props_fields:
            encoded = _props(table, props_fields, lines)
            if isinstance(encoded, pa.Array):
                arrays[column.name] = encoded
            else:
                partial[column.name] = encoded
        elif inferred and column.type.name == "dynamic" and column.name != "props":
            encoded, hint = _dynamic(column, table, lines, deferred)
            if hint is not None:
                parsed[column.name] = hint
            if isinstance(encoded, pa.Array):
                arrays[column.name] = encoded
            else:
                partial[column.name] = encoded
        elif inferred and (array := _from_inferred(column, table, props_fields)) is not None:
            arrays[column.name] = array
    python = [c for c in columns if c.name not in arrays]
    keys = table.column_names if inferred else None  # "ignore" mode hides unknown keys
    if python:
        try:
            converted, seen = _per_row(
                lines, table if inferred else None, python, props_fields, partial
            )
        except IngestError:
            return None
        arrays.update(converted)
        keys = keys if seen is None else seen
    if keys is None:
        return None
    batch = [arrays[c.name] for c in columns]
    if any(not c.nullable and a.null_count for c, a in zip(columns, batch, strict=True)):
        return None
    known = {c.name for c in columns} | props_fields
    unknown = [name for name in keys if name not in known]
    return assemble(batch, columns, lines.rows, ingest_time_ns, unknown, parsed)


def _read_type(column: Column, first: Any) -> pa.DataType | None:
    """The type pyarrow reads a column as; None lets it infer (the inferred type decides)."""
    name = column.type.name
    if name in _EXPLICIT:
        return _EXPLICIT[name]
    if name == "timestamp":  # epoch-ns integers if the first row has one, else strings
        return pa.int64() if is_int(first) else TIMESTAMP
    if name == "string" and (first is None or type(first) is str):
        return pa.string()
    return None


def _read(body: bytes, schema: pa.Schema, lines: Layout, unexpected: str) -> pa.Table | None:
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unexpected)
    try:
        # A BufferReader hands pyarrow's threads the body itself: a Python file object
        # would be read a block at a time under the GIL, into copies.
        table = pj.read_json(pa.BufferReader(body), parse_options=options)
        # Inference can build list arrays whose offsets overrun their values
        # (apache/arrow#51305, leading nulls in a list): never touch such a table.
        table.validate(full=True)
    except pa.ArrowException:
        return None
    if table.num_rows != lines.rows or _has_non_finite(table):
        return None
    return table


def _column(table: pa.Table, name: str, names: frozenset[str]) -> pa.Array | None:
    """The column ``name`` of ``table`` (whose ``names``, computed once: a body may have
    thousands of fields), or None when absent or all null."""
    if name not in names:
        return None
    array = table.column(name).combine_chunks()
    return None if pa.types.is_null(array.type) else array


def _from_inferred(
    column: Column, table: pa.Table, props_fields: frozenset[str]
) -> pa.Array | None:
    """A non-scalar column built by Arrow kernels alone, or None when rows need Python."""
    names = frozenset(table.column_names)
    array = _column(table, column.name, names)
    nulls = pa.nulls(table.num_rows, column.type.to_arrow())
    if column.name == "props":
        present = [array, *(_column(table, f, names) for f in props_fields)]
        return nulls if all(a is None for a in present) else None
    if array is None:
        return nulls
    if column.type.name == "string":
        if array.type in (pa.int64(), pa.bool_()):
            return array.cast(pa.string())  # the JSON text of an integer or a bool
        return array if array.type == pa.string() else None
    dim = column.type.vector_dim
    return None if dim is None else vectorized_vectors(array, dim)


def _dynamic(
    column: Column, table: pa.Table, lines: Layout, deferred: bool
) -> tuple[pa.Array | tuple[pa.Array, pa.Array], ParsedDynamic | None]:
    """A dynamic column's CBOR by Arrow kernels (when some rows need Python, the CBOR and
    the mask of those rows), and the parsed column with the rows it vouches for;
    ``deferred``: those rows hold no bytes (the extent writer encodes what it stores)."""
    array = _column(table, column.name, frozenset(table.column_names))
    if array is None:
        return pa.nulls(table.num_rows, pa.binary()), None
    if deferred:
        exact = vouched(array, lines.lines)
        values = pc.if_else(pc.is_valid(array), _NO_BYTES, pa.scalar(None, pa.binary()))
    else:
        values, exact = encode_dynamic(array, lines.lines)
    parsed = ParsedDynamic(array, exact)
    if pc.all(exact).as_py():
        return values, parsed
    return (values, pc.invert(exact)), parsed


def _props(
    table: pa.Table, props_fields: frozenset[str], lines: Layout
) -> pa.Array | tuple[pa.Array, pa.Array]:
    """The ``props`` column's CBOR by Arrow kernels: the overflow fields of each row as one
    map, keys in the line's order. Rows the encoder cannot vouch for, and rows with a
    ``props`` object of their own (Python merges the two), are left to Python: then the
    CBOR and the mask of those rows."""
    names = frozenset(table.column_names)
    present = [
        (f, a)
        for f in table.column_names
        if f in props_fields and (a := _column(table, f, names)) is not None
    ]
    own = _column(table, "props", names)
    if not present:
        values = pa.nulls(table.num_rows, pa.binary())
        return values if own is None else (values, pc.is_valid(own))
    present = _line_order(present, lines.lines)
    valid = functools.reduce(pc.or_, [pc.is_valid(a) for _, a in present])
    fields = [pa.field(f, a.type) for f, a in present]
    struct = pa.StructArray.from_arrays(
        [a for _, a in present], fields=fields, mask=pc.invert(valid)
    )
    values, exact = encode_dynamic(struct, lines.lines)
    python = pc.invert(exact)
    if own is not None:
        python = pc.or_(python, pc.is_valid(own))
    return (values, python) if pc.any(python).as_py() else values


def _line_order(fields: list[tuple[str, pa.Array]], lines: pa.Array) -> list[tuple[str, pa.Array]]:
    """``fields`` in the order the first line holding all their keys writes them (rows in
    another order are left to Python by the encoder); as given when no line holds all."""
    found = [pc.find_substring(lines, json.dumps(name, ensure_ascii=False)) for name, _ in fields]
    complete = pc.indices_nonzero(
        functools.reduce(pc.and_, [pc.greater_equal(f, 0) for f in found])
    )
    if not len(complete):
        return fields
    row = complete[0].as_py()
    return [field for _, field in sorted(zip([f[row].as_py() for f in found], fields, strict=True))]


def _per_row(
    lines: Layout,
    table: pa.Table | None,
    python: list[Column],
    props_fields: frozenset[str],
    partial: dict[str, tuple[pa.Array, pa.Array]],
) -> tuple[dict[str, pa.Array], list[str] | None]:
    """Python-converted columns. With an inferred ``table``, only rows where one of their
    fields holds a value (pyarrow has vetted them) -- of a ``partial`` column (its
    Arrow-built values, the rows needing Python), only those rows; without a table, every
    row, parsed strictly, and then also every top-level key in order of first appearance."""
    if table is None:
        numbers = lines.numbers.to_pylist()
        rows = [
            (n, parse_line(t, n)) for n, t in zip(numbers, lines.lines.to_pylist(), strict=True)
        ]
        keys: dict[str, None] = {}
        for _, obj in rows:
            keys.update(dict.fromkeys(obj))
        values, _ = convert_rows(rows, python, props_fields)
        return {c.name: pa.array(values[c.name], c.type.to_arrow()) for c in python}, list(keys)
    names = [c.name for c in python if c.name not in partial]
    if "props" in names:
        names += props_fields
    present = frozenset(table.column_names)
    valid = [pc.is_valid(a) for name in names if (a := _column(table, name, present)) is not None]
    valid += [needed for _, needed in partial.values()]
    mask = functools.reduce(pc.or_, valid)
    chosen = pc.indices_nonzero(mask)
    signed = any(c.type.vector_dim is not None for c in python)
    numbers = lines.numbers.take(chosen).to_pylist()
    texts = lines.lines.take(chosen).to_pylist()
    rows = [(n, parse_checked(t, signed_zero=signed)) for n, t in zip(numbers, texts, strict=True)]
    values, _ = convert_rows(rows, python, props_fields)
    position = pc.if_else(mask, pc.subtract(pc.cumulative_sum(mask.cast(pa.int64())), 1), None)
    converted = {c.name: pa.array(values[c.name], c.type.to_arrow()).take(position) for c in python}
    for name, (fast, _) in partial.items():
        converted[name] = pc.if_else(mask, converted[name], fast)
    return converted, None


def _has_non_finite(table: pa.Table) -> bool:
    """Whether any float anywhere (nested too) is NaN or ±inf: pyarrow reads NaN, Infinity
    and numbers that round to infinity; the slow reader rejects them all."""
    stack: list[pa.Array] = [
        chunk
        for column in table.columns
        if _holds_floats(column.type)  # a column's chunks share its type: most are skipped
        for chunk in column.chunks
    ]
    while stack:
        array = stack.pop()
        kind = array.type
        if pa.types.is_floating(kind):
            if pc.any(pc.invert(pc.is_finite(array))).as_py():
                return True
        elif pa.types.is_struct(kind):
            stack.extend(array.field(i) for i in range(kind.num_fields))
        elif pa.types.is_list(kind):
            stack.append(array.flatten())
    return False


def _holds_floats(kind: pa.DataType) -> bool:
    """Whether values of type ``kind`` may hold a float (a float, or a list or struct)."""
    return pa.types.is_floating(kind) or pa.types.is_struct(kind) or pa.types.is_list(kind)
