"""One parsed JSON value → the Python value Arrow stores, per kyma type.

Both paths use these for every field they convert in Python, so a value converts the same
way whichever path reads it. A converter raises :class:`Rejected` with what was expected and
what came; the caller adds the line and field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import cbor2

from kyma.engine.errors import IngestError
from kyma.engine.types import Column, KymaType, parse_timestamp

from ._json import is_int, show

Converter = Callable[[Any], Any]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
# The smallest double that rounds to infinity as a float32 (2**128 - 2**103).
F32_OVERFLOW = float.fromhex("0x1.ffffffp+127")
# The largest double that rounds to zero as a float32 (half the smallest subnormal, 2**-150).
F32_UNDERFLOW = float.fromhex("0x1p-150")
TIMESTAMP_EXPECTED = "expected timestamp (RFC 3339 string or epoch-ns integer)"


class Rejected(Exception):
    """A value does not fit its column; ``field`` overrides the column name when set."""

    def __init__(self, detail: str, field: str | None = None) -> None:
        super().__init__(detail)
        self.field = field


def _bool(value: Any) -> Any:
    if value is None or value is True or value is False:
        return value
    raise Rejected(f"expected bool, got {show(value)}")


def _ranged(expected: str, low: int, high: int) -> Converter:
    def convert(value: Any) -> Any:
        if value is None:
            return None
        if not is_int(value):
            raise Rejected(f"expected {expected}, got {show(value)}")
        if not low <= value <= high:
            raise Rejected(f"expected {expected}, got {show(value)} (out of range)")
        return int(value)

    return convert


def _real(value: Any) -> Any:
    if value is None or type(value) is float:
        return value
    if not is_int(value):
        raise Rejected(f"expected real (Float64), got {show(value)}")
    try:
        return float(value)
    except OverflowError:
        raise Rejected(f"expected real (Float64), got {show(value)} (out of range)") from None


def _float4(value: Any) -> Any:
    """A JSON number as a real (float32): beyond float4's range, or so small it would be
    zero, is refused as Postgres refuses it (22003 there)."""
    if value is None:
        return None
    if not (type(value) is float or is_int(value)):
        raise Rejected(f"expected float4 (Float32), got {show(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = F32_OVERFLOW
    if abs(number) >= F32_OVERFLOW or (number and abs(number) <= F32_UNDERFLOW):
        raise Rejected(f"expected float4 (Float32), got {show(value)} (out of range)")
    return number


def _string(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _dynamic(value: Any) -> Any:
    return None if value is None else cbor2.dumps(value)


def _timestamp(value: Any) -> Any:
    if value is None:
        return None
    if type(value) is str:
        ns = parse_timestamp(value)
        if ns is None:
            raise Rejected(f"{TIMESTAMP_EXPECTED}, got {show(value)}")
    elif is_int(value):
        ns = int(value)
    else:
        raise Rejected(f"{TIMESTAMP_EXPECTED}, got {show(value)}")
    if not INT64[0] <= ns <= INT64[1]:
        raise Rejected(f"{TIMESTAMP_EXPECTED}, got {show(value)} (out of range)")
    return ns


def _vector(dim: int) -> Converter:
    expected = f"expected vector({dim})"

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if type(value) is not list:
            raise Rejected(f"{expected}, got {show(value)}")
        floats = []
        for i, item in enumerate(value):
            if not (type(item) is float or is_int(item)):
                raise Rejected(f"{expected}, got {show(item)} at index {i} (not a number)")
            try:
                number = float(item)
            except OverflowError:
                number = F32_OVERFLOW
            if abs(number) >= F32_OVERFLOW:
                raise Rejected(f"{expected}, got {show(item)} at index {i} (beyond float32)")
            floats.append(number)
        if len(floats) != dim:
            raise Rejected(f"{expected}, got {len(floats)} numbers")
        return floats

    return convert


def _array(element: Converter, expected: str) -> Converter:
    def convert(value: Any) -> Any:
        if value is None:
            return None
        if type(value) is not list:
            raise Rejected(f"expected {expected}, got {show(value)}")
        return [element(item) for item in value]

    return convert


_SCALARS: dict[str, Converter] = {
    "bool": _bool,
    "int": _ranged("int (Int32)", *INT32),
    "long": _ranged("long (Int64)", *INT64),
    "real": _real,
    "float4": _float4,
    "string": _string,
    "timestamp": _timestamp,
    "dynamic": _dynamic,
}


def converter(column: Column) -> Converter:
    """The converter of a column; a non-nullable one rejects null (``_timestamp`` excepted)."""
    convert = _type_converter(column.type)
    if column.nullable or column.name == "_timestamp":
        return convert

    def not_null(value: Any) -> Any:
        if value is None:
            raise Rejected(f"expected {column.type}, got null (the column is not nullable)")
        return convert(value)

    return not_null


def _type_converter(kind: KymaType) -> Converter:
    if kind.array_depth:
        inner = KymaType(kind.name[len("array(") : -1])
        return _array(_type_converter(inner), kind.name)
    dim = kind.vector_dim
    return _vector(dim) if dim is not None else _SCALARS[kind.name]


def props_value(row: dict[str, Any], props_fields: frozenset[str], nullable: bool) -> Any:
    """CBOR of the row's ``props`` object merged with its non-null overflow fields."""
    props = row.get("props")
    if props is not None and type(props) is not dict:
        raise Rejected(f"expected a JSON object or null, got {show(props)}", "props")
    if not props_fields.isdisjoint(row):
        extra = {k: v for k, v in row.items() if v is not None and k in props_fields}
        clash = next((key for key in extra if key in (props or ())), None)
        if clash is not None:
            raise Rejected("the field is also a key of 'props'", clash)
        props = {**(props or {}), **extra} if extra else props
    if props is None and not nullable:
        raise Rejected("expected a JSON object, got null (the column is not nullable)")
    return None if props is None else cbor2.dumps(props)


def overflow_fields(columns: Sequence[Column], props_fields: Collection[str]) -> frozenset[str]:
    """The props fields that are not table columns; raise if the table has no ``props``."""
    names = {c.name for c in columns}
    fields = frozenset(props_fields) - names
    if fields and "props" not in names:
        raise IngestError(f"fields {sorted(fields)} belong in 'props', but the table has none")
    return fields


def convert_rows(
    rows: Iterable[tuple[int, dict[str, Any]]],
    columns: Sequence[Column],
    props_fields: frozenset[str],
) -> tuple[dict[str, list[Any]], int]:
    """Convert ``columns`` of each (line, row) as it comes, so the first offending line
    raises IngestError; also returns the number of rows."""
    plan = [(c.name, converter(c)) for c in columns if c.name != "props"]
    props = next((c for c in columns if c.name == "props"), None)
    out: dict[str, list[Any]] = {c.name: [] for c in columns}
    count = 0
    for line, row in rows:
        name = ""
        try:
            for name, convert in plan:
                out[name].append(convert(row.get(name)))
            if props is not None:
                name = "props"
                out[name].append(props_value(row, props_fields, props.nullable))
        except Rejected as e:
            field = e.field or name
            raise IngestError(f"line {line}, field {field!r}: {e}", line, field) from None
        count += 1
    return out, count
