"""Postgres's ``to_char(number, template)`` for digit templates, vectorized over Arrow arrays.

A template of ``9`` and ``0`` digit positions, a decimal point (``.`` or ``D``), group
separators (``,`` or ``G``) and the ``FM`` prefix is written as Postgres writes it: the
value rounded half away from zero to the positions after the point; ``9`` positions without
a digit blank, ``0`` positions (and every one after the first ``0``) zero; a sign position
before the first digit (blank for a positive value); ``#`` in every digit position when the
integer part does not fit. ``FM`` drops the blanks and the trailing zeros that only ``9``
positions hold. Other template patterns (``S``, ``MI``, ``PR``, ``EEEE``, ``V``, ``RN``, ``TH``,
text) are refused (0A000), and so is a ``double precision`` or ``real`` value: Postgres
rounds its exact binary value, kyma writes numerics and integers only (cast it to numeric).

``kyma_to_char_numeric(decimal128(38, 10), template)``; integers and numerics are cast to it.

>>> write(pa.array([1.5, -0.5, 12345, None], pa.decimal128(38, 10)), "999D99").to_pylist()
['   1.50', '   -.50', ' ###.##', None]
>>> write(pa.array([1.5, 0, 1234.5], pa.decimal128(38, 10)), "FM9,990.09").to_pylist()
['1.50', '0.00', '1,234.50']
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf
from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query.jsonb import constant

FUNCTION = "kyma_to_char_numeric"
ARGUMENT = pa.decimal128(38, 10)
_DIGITS, _POINTS, _GROUPS = "90", ".D", ",G"


def check(template: str) -> str:
    """The template without its ``FM`` prefixes; UnsupportedStatementError for any other
    pattern than digits, one decimal point and group separators (before the point)."""
    body = template.replace("FM", "").replace("fm", "")
    points = [c for c in body if c in _POINTS]
    allowed = set(_DIGITS + _POINTS + _GROUPS)
    unknown = next((c for c in body if c not in allowed), None)
    after = body[body.index(points[0]) + 1 :] if points else ""
    if unknown is not None or len(points) > 1 or any(c in _GROUPS for c in after):
        raise UnsupportedStatementError(
            f"to_char: numeric template {template!r} is not supported (kyma writes 9, 0, D,"
            " '.', G, ',' and FM)"
        )
    if len([c for c in body if c in _DIGITS]) > 28:
        raise UnsupportedStatementError(f"to_char: numeric template {template!r} is too long")
    return body


def call(value: exp.Expression, template: str, kind: exp.DataType) -> exp.Expression:
    """The call of ``kyma_to_char_numeric`` for ``value`` of type ``kind``."""
    if kind.this in (exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
        raise UnsupportedStatementError(
            "to_char of double precision is not supported; cast the value to numeric"
        )
    if not any(c in _DIGITS for c in check(template)):
        raise UnsupportedStatementError(f"to_char: numeric template {template!r} has no digit")
    argument = exp.Cast(this=value.copy(), to=exp.DataType.build("DECIMAL(38, 10)"))
    written = exp.Literal.string(template)
    return exp.Anonymous(this=FUNCTION.upper(), expressions=[argument, written])


def write(values: pa.Array, template: str) -> pa.Array:
    """Each value written by ``template``."""
    fill = "FM" in template or "fm" in template
    body = check(template)
    whole, _, fraction = body.partition(next((c for c in body if c in _POINTS), "\0"))
    has_point = len(whole) < len(body)
    pre = sum(c in _DIGITS for c in whole)
    post = len(fraction)
    first_zero = next((i for i, c in enumerate(whole) if c == "0"), len(whole))
    last_zero = max((i + 1 for i, c in enumerate(fraction) if c == "0"), default=0)
    rounded = pc.round(values, ndigits=post, round_mode="half_towards_infinity")
    exact = pc.cast(rounded, pa.decimal128(38, post))
    text = pc.cast(pc.abs(exact), pa.string())
    parts = pc.split_pattern(pc.binary_join_element_wise(text, ".", ""), ".", max_splits=1)
    integer = pc.list_element(parts, 0)
    decimals = pc.utf8_slice_codeunits(pc.list_element(parts, 1), 0, -1)
    kept = pc.max_element_wise(pc.utf8_length(pc.utf8_rtrim(decimals, "0")), last_zero)
    if post:  # 0.5 is written .50: an integer part of 0 is no digit (FM9.9 writes 0 as 0.)
        no_digit = pc.equal(integer, "0")
        if fill:
            no_digit = pc.and_(no_digit, pc.greater(kept, 0))
        integer = pc.if_else(no_digit, "", integer)
    overflow = pc.greater(pc.utf8_length(integer), pre)
    padded = pc.utf8_lpad(integer, pre, "x")
    pieces: list[pa.Array | str] = []
    started = pc.equal(integer, "\0")  # all false (nulls stay null)
    digit = 0
    for position, char in enumerate(whole):
        if char in _GROUPS:
            pieces.append(pc.if_else(started, ",", ""))
            continue
        at = pc.utf8_slice_codeunits(padded, digit, digit + 1)
        blank = pc.equal(at, "x")
        piece = pc.if_else(blank, "0" if position >= first_zero else "", at)
        started = pc.or_(started, pc.not_equal(piece, ""))
        pieces.append(piece)
        digit += 1
    if has_point:
        pieces.append(".")
    for position in range(post):
        at = pc.utf8_slice_codeunits(decimals, position, position + 1)
        pieces.append(pc.if_else(pc.less(position, kept), at, "") if fill else at)
    content = pc.binary_join_element_wise(*pieces, "") if pieces else pc.cast(text, pa.string())
    hashes = "".join("#" if c in _DIGITS else "." if c in _POINTS else "" for c in body)
    if not fill:
        hashes = "".join("#" if c in _DIGITS else "." if c in _POINTS else "," for c in body)
    content = pc.if_else(overflow, hashes, content)
    negative = pc.less(exact, pa.scalar(0, exact.type))  # -0.001 rounded to 0.00 is not
    sign = pc.if_else(negative, "-", "" if fill else " ")
    signed = pc.binary_join_element_wise(sign, content, "")
    if fill:
        return signed
    return pc.utf8_lpad(signed, len(body) + 1, " ")


def _udf(values: pa.Array, template: pa.Array) -> pa.Array:
    written = constant(template)
    if written is None:
        return pa.nulls(len(values), pa.string())
    return write(values, written)


FUNCTIONS = (udf(_udf, [ARGUMENT, pa.string()], pa.string(), "immutable", name=FUNCTION),)
