"""The constants of INSERT … VALUES as Postgres reads them: casts applied, then assigned to
the column's type.

A quoted literal goes through the column type's input (``'12'`` into a long is 12, ``'t'``
into a bool is true, ``'{1,2}'`` or ``'[1,2]'`` into a vector is that list); a cast is
computed as Postgres computes it (``CAST('12' AS bigint)``, ``2.5::int`` is 3); a number is
rounded into an integer column (numeric half away from zero, float half to even) and must
fit it. Bad text is ``InvalidTextError`` (22P02), a value too large ``OutOfRangeError``
(22003), as in Postgres. Only a statement's constants get here, never stored rows.

>>> literal(exp.cast(exp.Literal.string("12"), "BIGINT"), "long")
12
>>> literal(exp.Literal.number("2.5"), "int"), literal(exp.Literal.string("{1,2}"), "vector(2)")
(3, [1.0, 2.0])
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import numpy as np
from sqlglot import exp

from kyma.engine.errors import (
    InvalidTextError,
    OutOfRangeError,
    UnsupportedStatementError,
)
from kyma.engine.query.rewrite import array_literals

_T = exp.DataType.Type
_JSON_TYPES = (_T.JSON, _T.JSONB)
_INTEGERS = {_T.TINYINT: 16, _T.SMALLINT: 16, _T.INT: 32, _T.BIGINT: 64}
_TEXTS = (_T.TEXT, _T.VARCHAR, _T.CHAR)
_BITS = {"int": 32, "long": 64}
_INTEGER_NAMES = {16: "smallint", 32: "integer", 64: "bigint"}
_TRUE = {"t", "true", "y", "yes", "on", "1"}
_FALSE = {"f", "false", "n", "no", "off", "0"}


def literal(node: exp.Expression, kind: str | None) -> Any:
    """A VALUES item's value for a column of kyma type ``kind`` (None: as written; text is
    JSON for dynamic). UnsupportedStatementError for anything but a constant."""
    return assign(_constant(node, kind == "dynamic"), kind)


def _constant(node: exp.Expression, dynamic: bool = False) -> Any:
    """The value of a constant expression: ints, Decimals (numeric literals), floats, text,
    bools, lists, None; ``dynamic``: text is JSON."""
    if isinstance(node, exp.Paren):
        return _constant(node.this, dynamic)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        value = _constant(node.this)
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise InvalidTextError(f"cannot negate {node.this.sql('postgres')!r}")
        return -value
    if isinstance(node, exp.Literal) and not node.is_string:
        return int(node.this) if node.is_int else Decimal(node.this)
    if isinstance(node, exp.Literal):
        return _json(node.this) if dynamic else node.this
    if isinstance(node, exp.Array):
        return [_constant(e) for e in node.expressions]
    if isinstance(node, exp.Cast) and node.to.this in _JSON_TYPES:
        inner = _constant(node.this)
        return _json(inner) if isinstance(inner, str) else inner
    if isinstance(node, exp.Cast):
        return cast(_constant(node.this), node.to)
    if isinstance(node, exp.ParseJSON):
        return _constant(node.this, dynamic=True)
    raise UnsupportedStatementError(
        f"INSERT … VALUES: {node.sql('postgres')!r} is not a constant; use INSERT … SELECT"
    )


def cast(value: Any, to: exp.DataType) -> Any:
    """``CAST(value AS to)`` as Postgres computes it, for the types a VALUES item names."""
    if value is None:
        return None
    kind = to.this
    if kind in _INTEGERS:
        return _integer(value, _INTEGERS[kind])
    if kind == _T.FLOAT:
        return _real(value)
    if kind == _T.DOUBLE:
        return _float(value)
    if kind == _T.DECIMAL:
        return _numeric(value, to)
    if kind == _T.BOOLEAN:
        return _bool(value)
    if kind in _TEXTS:
        return _text(value)
    if kind == _T.ARRAY and to.expressions:
        items = array_literals.parse(value) if isinstance(value, str) else value
        return _each(items, lambda item: cast(item, to.expressions[0]))
    if kind == _T.VECTOR or (kind == _T.USERDEFINED and "vector" in str(to.args.get("kind"))):
        return _vector(value)
    return value


def assign(value: Any, kind: str | None) -> Any:
    """``value`` stored in a column of kyma type ``kind`` (None or dynamic: JSON as it is)."""
    if value is None or kind is None or kind == "dynamic":
        return _plain(value)
    if kind in _BITS:
        return _integer(value, _BITS[kind])
    if kind == "real":
        return _float(value)
    if kind == "float4":
        return _real(value)
    if kind == "bool":
        return _bool(value)
    if kind == "string":
        return _text(value)
    if kind.startswith("vector("):
        return _vector(value)
    if kind.startswith("array("):
        element = kind[len("array(") : -1]
        items = array_literals.parse(value) if isinstance(value, str) else value
        return _each(items, lambda item: assign(item, element))
    return _plain(value)  # timestamp: the write path reads the text


def _each(items: Any, convert: Any) -> Any:
    if not isinstance(items, list):
        return items  # the write path names what it expected
    return [_each(i, convert) if isinstance(i, list) else convert(i) for i in items]


def _plain(value: Any) -> Any:
    """A JSON value: numeric literals as floats, lists element by element."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _integer(value: Any, bits: int) -> Any:
    name = _INTEGER_NAMES[bits]
    if isinstance(value, str):
        try:
            number: Any = int(value.strip())
        except ValueError:
            raise InvalidTextError(f"invalid input syntax for type {name}: {value!r}") from None
    elif isinstance(value, bool):
        return value  # the write path refuses a bool for a number, as Postgres does
    elif isinstance(value, Decimal):  # numeric: half away from zero
        number = int(value.to_integral_value(rounding=ROUND_HALF_UP))
    elif isinstance(value, float):  # float: half to even (rint)
        number = round(value)
    else:
        number = value
    if not isinstance(number, int):
        return value
    if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        raise OutOfRangeError(f"{name} out of range: {value!r}")
    return number


def _float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise InvalidTextError(
                f"invalid input syntax for type double precision: {value!r}"
            ) from None
    if isinstance(value, int | Decimal) and not isinstance(value, bool):
        return float(value)
    return value


def _real(value: Any) -> Any:
    """``_float`` rounded to float4 (``real``), refused beyond its range as Postgres does."""
    number = _float(value)
    if not isinstance(number, float):
        return number
    with np.errstate(over="ignore"):
        real = float(np.float32(number))
    if math.isfinite(number) and math.isinf(real):
        raise OutOfRangeError(f"real out of range: {value!r}")
    if number != 0 and real == 0:
        raise OutOfRangeError(f"real out of range: {value!r}")
    return real


def _numeric(value: Any, to: exp.DataType) -> Any:
    try:
        number = Decimal(value.strip() if isinstance(value, str) else str(value))
    except InvalidOperation:
        raise InvalidTextError(f"invalid input syntax for type numeric: {value!r}") from None
    sizes = [int(e.name) for e in to.expressions]
    if not sizes:
        return number
    precision, scale = sizes[0], sizes[1] if len(sizes) > 1 else 0
    number = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if number.adjusted() >= precision - scale:
        raise OutOfRangeError(f"numeric field overflow: {value!r} in numeric({precision}, {scale})")
    return number


def _bool(value: Any) -> Any:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise InvalidTextError(f"invalid input syntax for type boolean: {value!r}")
    if isinstance(value, int) and not isinstance(value, bool):
        return value != 0
    return value


def _text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return str(value)
    return value


def _vector(value: Any) -> Any:
    """A vector from ``'[1,2]'`` (pgvector's text), ``'{1,2}'`` (an array's) or a list."""
    if isinstance(value, str):
        text = value.strip()
        value = _json(text) if text.startswith("[") else array_literals.parse(text)
    return _each(value, _float)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidTextError(f"invalid input syntax for type json: {text!r} ({e.msg})") from None
