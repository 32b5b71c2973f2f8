"""Bind parameters (text or binary format, with the type OID the client declared) as SQL
literals, so a bound statement runs through the same query path as any other."""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from decimal import Decimal, InvalidOperation

from kyma.engine.errors import SqlError
from kyma.pgwire import _types as t
from kyma.pgwire._sql_text import quote

_NUMERIC = {t.INT2, t.INT4, t.INT8, t.FLOAT4, t.FLOAT8, t.NUMERIC}
_BINARY = {
    t.INT2: "!h",
    t.INT4: "!i",
    t.INT8: "!q",
    t.FLOAT4: "!f",
    t.FLOAT8: "!d",
}
_TEXTUAL = {0, t.TEXT, t.UNKNOWN, 1043, 19, 1042}  # unknown, text, varchar, name, bpchar
_ELEMENT_TYPES = {
    t.BOOL: "BOOLEAN",
    t.INT2: "SMALLINT",
    t.INT4: "INT",
    t.INT8: "BIGINT",
    t.FLOAT4: "REAL",
    t.FLOAT8: "DOUBLE PRECISION",
    t.NUMERIC: "NUMERIC",
    t.TEXT: "TEXT",
    t.DATE: "DATE",
    t.TIMESTAMP: "TIMESTAMP",
    t.TIMESTAMPTZ: "TIMESTAMPTZ",
}
_ARRAY_TYPES = {t.ARRAY_OF[element]: f"{name}[]" for element, name in _ELEMENT_TYPES.items()} | {
    1015: "TEXT[]"
}  # varchar[]
"""Array type OIDs whose text a client sends (psycopg's lists): cast to the array type, so
the array literal reads as Postgres reads it (``'{a,b}'`` is two elements)."""


def literal(value: bytes | None, oid: int, binary: bool, position: int) -> str:
    """The SQL literal of parameter ``$position``.

    >>> literal(b"42", 20, False, 1), literal(b"it's", 0, False, 2), literal(None, 25, False, 3)
    ('42', "'it''s'", 'NULL')
    >>> literal(struct.pack("!q", -7), 20, True, 1), literal(b"\\x01", 16, True, 1)
    ('(-7)', 'TRUE')
    >>> literal(b"{a,b}", 1009, False, 1)
    "CAST('{a,b}' AS TEXT[])"
    >>> literal(b"0.1", 700, False, 1), literal(struct.pack("!f", 0.5), 700, True, 1)
    ("CAST('0.1' AS REAL)", "CAST('0.5' AS REAL)")
    """
    if value is None:
        return "NULL"
    if binary:
        return _binary(value, oid, position)
    text = value.decode()
    if oid == t.BOOL:
        return "TRUE" if text.lower() in ("t", "true", "1", "on", "yes") else "FALSE"
    if oid in _NUMERIC:
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise SqlError(f"parameter ${position}: expected a number, got {text!r}") from None
        if oid == t.FLOAT4:  # a real, as Postgres types the parameter
            return f"CAST({quote(text)} AS REAL)"
        return _signed(text) if number.is_finite() else f"CAST({quote(text)} AS DOUBLE)"
    if oid in _ARRAY_TYPES:
        return f"CAST({quote(text)} AS {_ARRAY_TYPES[oid]})"
    return quote(text)


def _binary(value: bytes, oid: int, position: int) -> str:
    try:
        if oid in _BINARY:
            (number,) = struct.unpack(_BINARY[oid], value)
            if oid == t.FLOAT4:
                return f"CAST({quote(repr(number))} AS REAL)"
            if isinstance(number, float) and not math.isfinite(number):
                return f"CAST({quote(str(number))} AS DOUBLE)"
            return _signed(repr(number))
        if oid in _DECODERS:
            return _DECODERS[oid](value)
    except (struct.error, ValueError, IndexError):
        raise SqlError(f"parameter ${position}: {len(value)} bytes for type {oid}") from None
    if oid == t.BOOL:
        return "TRUE" if value == b"\x01" else "FALSE"
    if oid == t.JSONB:  # a version byte, then the JSON text
        return quote(value[1:].decode())
    if oid in _TEXTUAL or oid == t.JSON:
        return quote(value.decode())
    raise SqlError(
        f"parameter ${position}: binary format of type OID {oid} is not supported;"
        " send it in text format"
    )


def _array(value: bytes) -> str:
    """array_recv of a one-dimensional array: ``ARRAY[...]`` of the element literals."""
    ndim, _flags, element = struct.unpack_from("!iii", value)
    if ndim == 0:
        return "ARRAY[]"
    if ndim != 1:
        raise ValueError("multi-dimensional array")
    (count,) = struct.unpack_from("!i", value, 12)
    pos, items = 20, []
    for _ in range(count):
        (length,) = struct.unpack_from("!i", value, pos)
        pos += 4
        cell = None if length < 0 else value[pos : pos + length]
        pos += max(length, 0)
        items.append(literal(cell, 23 if element == 26 else element, True, 0))
    return "ARRAY[" + ", ".join(items) + "]"


def _timestamp(value: bytes) -> str:
    (micros,) = struct.unpack("!q", value)
    at = dt.datetime(2000, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros)
    return quote(at.isoformat())


def _date(value: bytes) -> str:
    (days,) = struct.unpack("!i", value)
    return quote((dt.date(2000, 1, 1) + dt.timedelta(days=days)).isoformat())


def _numeric(value: bytes) -> str:
    """numeric_recv: digit count, weight, sign, scale, base-10000 digits.

    >>> _numeric(bytes.fromhex("000200000000000200011388"))
    '1.50'
    """
    count, weight, sign, scale = struct.unpack_from("!hhHh", value)
    if sign in (0xC000, 0xD000, 0xF000):
        name = {0xC000: "NaN", 0xD000: "Infinity", 0xF000: "-Infinity"}[sign]
        return f"CAST({quote(name)} AS DOUBLE)"
    digits = struct.unpack_from(f"!{count}h", value, 8)
    number = sum(Decimal(d) * Decimal(10000) ** (weight - i) for i, d in enumerate(digits))
    number = number.quantize(Decimal(1).scaleb(-scale)) if scale else number
    return _signed(("-" if sign == 0x4000 else "") + format(number, "f"))


def _signed(number: str) -> str:
    """A negative number in parentheses: the value stays one operand where the parameter
    stood (``$1::bigint`` of -2^63 is not ``-(2^63::bigint)``, ``x-$1`` no ``--`` comment).

    >>> _signed("-9223372036854775808"), _signed("7")
    ('(-9223372036854775808)', '7')
    """
    return f"({number})" if number.startswith("-") else number


_DECODERS = {
    t.TIMESTAMP: _timestamp,
    t.TIMESTAMPTZ: _timestamp,
    t.DATE: _date,
    t.NUMERIC: _numeric,
    2950: lambda v: quote(str(uuid.UUID(bytes=v))),  # uuid
    26: lambda v: str(struct.unpack("!I", v)[0]),  # oid
    **{array: _array for array in (1028, *t.ARRAY_OF.values())},
}
