"""Bind parameters (text or binary format, with the type OID the client declared) as SQL
literals, so a bound statement runs through the same query path as any other."""

from __future__ import annotations

import struct
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


def literal(value: bytes | None, oid: int, binary: bool, position: int) -> str:
    """The SQL literal of parameter ``$position``.

    >>> literal(b"42", 20, False, 1), literal(b"it's", 0, False, 2), literal(None, 25, False, 3)
    ('42', "'it''s'", 'NULL')
    >>> literal(struct.pack("!q", -7), 20, True, 1), literal(b"\\x01", 16, True, 1)
    ('-7', 'TRUE')
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
        return text if number.is_finite() else f"CAST({quote(text)} AS DOUBLE)"
    return quote(text)


def _binary(value: bytes, oid: int, position: int) -> str:
    if oid in _BINARY:
        try:
            (number,) = struct.unpack(_BINARY[oid], value)
        except struct.error:
            raise SqlError(f"parameter ${position}: {len(value)} bytes for type {oid}") from None
        return repr(number)
    if oid == t.BOOL:
        return "TRUE" if value == b"\x01" else "FALSE"
    if oid in _TEXTUAL or oid in (t.JSON, t.JSONB):
        return quote(value.decode())
    raise SqlError(
        f"parameter ${position}: binary format of type OID {oid} is not supported;"
        " send it in text format"
    )
