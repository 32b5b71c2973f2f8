"""Arrow columns as Postgres types: the type OID a client sees and the text format of values.

dynamic → jsonb (the JSON the HTTP API renders, never CBOR bytes), vector → real[],
timestamp → timestamptz (microseconds, as Postgres keeps them), decimals and numeric text
(``pg_numeric.NUMERIC``: Postgres's text of each value) → numeric.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.dynamic import is_dynamic, json_text, json_texts
from kyma.engine.query.pg_float import postgres_text
from kyma.engine.query.pg_numeric import is_numeric_text
from kyma.server import query as http_query  # a module: kyma.server.query imports kyma.pgcatalog

BOOL, BYTEA, INT8, INT2, INT4, TEXT, JSON = 16, 17, 20, 21, 23, 25, 114
FLOAT4, FLOAT8, UNKNOWN = 700, 701, 705
DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL, NUMERIC, JSONB = (
    1082,
    1083,
    1114,
    1184,
    1186,
    1700,
    3802,
)
ARRAY_OF = {
    BOOL: 1000,
    INT2: 1005,
    INT4: 1007,
    TEXT: 1009,
    INT8: 1016,
    FLOAT4: 1021,
    FLOAT8: 1022,
    TIMESTAMP: 1115,
    DATE: 1182,
    TIMESTAMPTZ: 1185,
    NUMERIC: 1231,
    JSONB: 3807,
}
SIZES = {BOOL: 1, INT2: 2, INT4: 4, INT8: 8, FLOAT4: 4, FLOAT8: 8, DATE: 4, TIMESTAMPTZ: 8}


def type_oid(field: pa.Field) -> int:
    """The OID of a result column (text for what Postgres has no type for)."""
    if is_dynamic(field):
        return JSONB
    if is_numeric_text(field):  # a numeric quotient, each value written with its scale
        return NUMERIC
    return _oid(field.type)


def _oid(dtype: pa.DataType) -> int:
    if (
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
    ):
        return ARRAY_OF.get(_oid(dtype.value_type), TEXT)
    if pa.types.is_boolean(dtype):
        return BOOL
    if pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_uint8(dtype):
        return INT2
    if pa.types.is_int32(dtype) or pa.types.is_uint16(dtype):
        return INT4
    if pa.types.is_int64(dtype) or pa.types.is_uint32(dtype):
        return INT8
    if pa.types.is_integer(dtype) or pa.types.is_decimal(dtype):
        return NUMERIC
    if pa.types.is_float16(dtype) or pa.types.is_float32(dtype):
        return FLOAT4
    if pa.types.is_floating(dtype):
        return FLOAT8
    if pa.types.is_timestamp(dtype):
        return TIMESTAMP if dtype.tz is None else TIMESTAMPTZ
    if pa.types.is_date(dtype):
        return DATE
    if pa.types.is_time(dtype):
        return TIME
    if pa.types.is_interval(dtype) or pa.types.is_duration(dtype):
        return INTERVAL
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return BYTEA
    if pa.types.is_struct(dtype) or pa.types.is_map(dtype):
        return JSONB
    return TEXT


def text_column(field: pa.Field, column: pa.ChunkedArray) -> pa.Array:
    """Every value of ``column`` in Postgres' text format, as a large_binary array (null
    for NULL); integers, strings, booleans and floats are rendered by Arrow kernels."""
    dtype = field.type
    if is_dynamic(field):
        return json_texts(column).cast(pa.large_binary())
    if pa.types.is_struct(dtype) or pa.types.is_map(dtype):
        values = [
            None if v is None else json_text(v).encode()
            for v in http_query.json_column(field, column)
        ]
        return pa.array(values, pa.large_binary())
    if pa.types.is_integer(dtype) or pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return column.cast(pa.large_string()).cast(pa.large_binary()).combine_chunks()
    if pa.types.is_boolean(dtype):
        return pc.if_else(column, b"t", b"f").cast(pa.large_binary()).combine_chunks()
    if pa.types.is_float64(dtype) or pa.types.is_float32(dtype):
        texts = [postgres_text(chunk) for chunk in column.chunks]
        return pa.chunked_array(texts, pa.string()).cast(pa.large_binary()).combine_chunks()
    if pa.types.is_timestamp(dtype):
        micros = column.cast(pa.timestamp("us", dtype.tz), safe=False)
        values = [None if v is None else _timestamp(v).encode() for v in micros.to_pylist()]
        return pa.array(values, pa.large_binary())
    render = _renderer(dtype)
    values = [None if v is None else render(v).encode() for v in column.to_pylist()]
    return pa.array(values, pa.large_binary())


def _renderer(dtype: pa.DataType) -> Callable[[Any], str]:
    if (
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
    ):
        element = _renderer(dtype.value_type)
        return lambda v: _array(v, element)
    if pa.types.is_boolean(dtype):
        return lambda v: "t" if v else "f"
    if pa.types.is_float16(dtype) or pa.types.is_float32(dtype):
        return lambda v: _float(v, np.float32)
    if pa.types.is_floating(dtype):
        return lambda v: _float(v, np.float64)
    if pa.types.is_decimal(dtype):
        return lambda v: format(Decimal(v), "f")
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return lambda v: "\\x" + bytes(v).hex()
    if pa.types.is_timestamp(dtype):
        return _timestamp
    if pa.types.is_interval(dtype):
        return lambda v: _interval(v.months, v.days, v.nanoseconds // 1000)
    if pa.types.is_duration(dtype):
        return lambda v: _interval(0, 0, v // dt.timedelta(microseconds=1))
    return str


def _interval(months: int, days: int, micros: int) -> str:
    """Postgres' ``postgres`` IntervalStyle.

    >>> _interval(14, 3, 4 * 3600_000_000 + 500_000), _interval(0, 1, 0), _interval(0, 0, -60e6)
    ('1 year 2 mons 3 days 04:00:00.5', '1 day', '-00:01:00')
    """
    years, mons = int(months / 12), months - 12 * int(months / 12)
    parts = [
        f"{n} {unit}{'' if abs(n) == 1 else 's'}"
        for n, unit in ((years, "year"), (mons, "mon"), (days, "day"))
        if n
    ]
    if micros or not parts:
        sign, micros = ("-" if micros < 0 else ""), abs(int(micros))
        seconds, fraction = divmod(micros, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hours, minute = divmod(minutes, 60)
        text = f"{sign}{hours:02d}:{minute:02d}:{second:02d}"
        parts.append(text + (f".{fraction:06d}".rstrip("0") if fraction else ""))
    return " ".join(parts)


def _float(value: float, kind: type) -> str:
    """Postgres' shortest exact rendering: ``1``, ``0.1``, ``1e+20``, ``NaN``, ``-Infinity``.

    >>> _float(1.0, np.float64), _float(0.1, np.float32), _float(float("-inf"), np.float64)
    ('1', '0.1', '-Infinity')
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    text = str(kind(value))
    return text[:-2] if text.endswith(".0") else text


def _timestamp(value: dt.datetime) -> str:
    """``2024-05-01 12:00:00.5+00``, as Postgres renders a timestamptz in UTC.

    >>> _timestamp(dt.datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=dt.UTC))
    '2024-05-01 12:00:00.5+00'
    """
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + ("+00" if value.tzinfo is not None else "")


def _array(values: list[Any], element: Callable[[Any], str]) -> str:
    """An array literal: ``{1,NULL,"a b"}``; elements quoted when Postgres would.

    >>> _array([1, None, "a b", 'q"'], str)
    '{1,NULL,"a b","q\\\\""}'
    """
    parts = []
    for value in values:
        if value is None:
            parts.append("NULL")
            continue
        text = element(value)
        if text == "" or text.upper() == "NULL" or any(c in text for c in '{},"\\ \t\n'):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(text)
    return "{" + ",".join(parts) + "}"
