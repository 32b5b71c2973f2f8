"""Postgres's text of a float (``float8out`` / ``float4out``), vectorized over Arrow arrays.

Postgres 12+ writes the shortest digits that read back as the same float (its default
``extra_float_digits = 1``), in positional notation when the decimal exponent is in
[-4, 15) for float8 ([-4, 6) for float4), else as ``1.5e-07`` / ``1e+20`` (at least two
exponent digits); ``NaN``, ``Infinity``, ``-Infinity``, ``-0``. Arrow's cast to text finds
the same shortest digits but switches notation elsewhere (``0.00001``, ``1.5e-7``,
``1.23456789012345e+14``) and writes ``inf``/``nan``: its text is decomposed into digits and
exponent and written again, with Arrow kernels only.

``kyma_float8_text(double)`` and ``kyma_float4_text(real)`` are session functions (``udfs``);
``rewrite.float_text`` sends float to text conversions to them.

>>> postgres_text(pa.array([2.0, 1e20, 1.5e-7, 1e-5, 123456789012345.6, -0.0, None])).to_pylist()
['2', '1e+20', '1.5e-07', '1e-05', '123456789012345.6', '-0', None]
>>> postgres_text(pa.array([1234567.0, float("nan"), float("-inf")], pa.float32())).to_pylist()
['1.234567e+06', 'NaN', '-Infinity']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf

_LOWEST = -4
"""The lowest decimal exponent written positionally (both types)."""
_HIGHEST = {4: 6, 8: 15}
"""Per byte width: the decimal exponent from which Postgres writes exponential notation."""
_MANTISSA_BITS = {4: 24, 8: 53}
_EXACT = pa.decimal256(60, 0)
_SPECIAL = ("nan", "inf", "-inf")


def postgres_text(values: pa.Array) -> pa.Array:
    """Each float of ``values`` (float32 or float64) as Postgres writes it; nulls stay."""
    arrow = pc.cast(values, pa.string())
    highest = _HIGHEST[values.type.byte_width]
    size = pc.abs(values)
    in_range = pc.and_(pc.greater_equal(size, 10.0**_LOWEST), pc.less(size, 10.0**highest))
    plain = pc.and_(pc.invert(pc.match_substring(arrow, "e")), pc.or_(pc.equal(size, 0), in_range))
    if pc.all(plain).as_py() is not False:  # Arrow wrote them as Postgres does
        return arrow
    others = pc.invert(pc.fill_null(plain, True))
    written = _rewritten(pc.filter(values, others), pc.filter(arrow, others), highest)
    return pc.replace_with_mask(arrow, others, written)


def _rewritten(values: pa.Array, arrow: pa.Array, highest: int) -> pa.Array:
    """Postgres's text of floats Arrow writes otherwise (``arrow``: its text of them)."""
    for arrow_text in _SPECIAL:
        arrow = pc.if_else(pc.equal(arrow, arrow_text), "1", arrow)  # written below
    negative = pc.less(values, 0)
    unsigned = pc.utf8_ltrim(arrow, "-")
    exponential = pc.match_substring(unsigned, "e")
    digits, exponent = _decomposed(unsigned, exponential)
    bits = _MANTISSA_BITS[values.type.byte_width]
    size = pc.abs(values)
    bounded = pc.and_(pc.greater_equal(size, 2.0**bits), pc.less(size, 2.0 ** (bits + 80)))
    bounded = pc.fill_null(bounded, False)
    if pc.any(bounded).as_py():
        edges = _on_edge(pc.filter(size, bounded), pc.filter(unsigned, bounded), bits)
        exact, power = _decomposed(edges, pa.scalar(False))
        mask = np.zeros(len(arrow), dtype=bool)
        mask[np.flatnonzero(bounded)] = pc.is_valid(edges).to_numpy(zero_copy_only=False)
        digits = pc.replace_with_mask(digits, pa.array(mask), pc.drop_null(exact))
        exponent = pc.replace_with_mask(exponent, pa.array(mask), pc.drop_null(power))
    positional = pc.and_(pc.greater_equal(exponent, _LOWEST), pc.less(exponent, highest))
    written = pc.if_else(positional, unsigned, _exponential(digits, exponent))
    moved = pc.fill_null(pc.and_(positional, exponential), False)  # Arrow: 1.5e+14
    if pc.any(moved).as_py():
        shifted = _positional(pc.filter(digits, moved), pc.filter(exponent, moved))
        written = pc.replace_with_mask(written, moved, shifted)
    signed = pc.if_else(negative, pc.binary_join_element_wise("-", written, ""), written)
    signed = pc.if_else(pc.is_nan(values), "NaN", signed)
    return pc.if_else(pc.is_inf(values), pc.if_else(negative, "-Infinity", "Infinity"), signed)


def _decomposed(text: pa.Array, exponential: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Arrow's unsigned text as its significant digits (no leading or trailing zero) and
    the decimal exponent of the first of them: ``'0.0012'`` is ``('12', -3)``."""
    mantissa, power = _halves(text, "e")
    whole, fraction = _halves(mantissa, ".")
    leading = pc.subtract(pc.utf8_length(fraction), pc.utf8_length(pc.utf8_ltrim(fraction, "0")))
    below_one = pc.equal(whole, "0")
    joined = pc.binary_join_element_wise(whole, fraction, "")
    digits = pc.utf8_rtrim(pc.utf8_ltrim(joined, "0"), "0")
    stated = pc.cast(pc.utf8_ltrim(pc.if_else(exponential, power, "0"), "+"), pa.int32())
    exponent = pc.if_else(
        below_one,
        pc.subtract(pc.negate(leading), 1),
        pc.add(stated, pc.subtract(pc.utf8_length(whole), 1)),
    )
    return digits, exponent


def _on_edge(size: pa.Array, text: pa.Array, bits: int) -> pa.Array:
    """Postgres's digits, as an integer's text, of the integral floats whose Arrow ``text``
    lies on an edge of their rounding interval; null for the others.

    Arrow takes such a decimal when the float's last bit is 0 (it reads back to the float:
    ``5e+22``); Postgres's Ryu never does (``4.9999999999999996e+22``). Edges are decimals
    of at most 17 digits only from 2^bits to about 2^(bits + 80), where every float is an
    integer: held exactly as a decimal here, and the shortest decimal strictly inside its
    interval found by rounding away ever fewer digits (the nearest at that length wins)."""
    exact = pc.cast(size, _EXACT)
    mantissa, power = np.frexp(size.to_numpy(zero_copy_only=False))
    ulp = pc.cast(pa.array(np.ldexp(1.0, power - bits)), _EXACT)
    below = pa.array(mantissa == 0.5)  # a power of two: its interval's lower half is half
    arrow = pc.cast(text, _EXACT)
    edge = pc.or_(
        pc.equal(_twice(pc.subtract(arrow, exact)), ulp),
        pc.equal(_twice(pc.subtract(exact, arrow), below), ulp),
    )
    if not pc.any(edge).as_py():
        return pa.nulls(len(size), pa.string())
    exact, ulp, below = (pc.filter(column, edge) for column in (exact, ulp, below))
    every = pa.nulls(len(size), pa.string())
    return pc.replace_with_mask(every, edge, pc.cast(_inside(exact, ulp, below), pa.string()))


def _inside(exact: pa.Array, ulp: pa.Array, below: pa.Array) -> pa.Array:
    """The shortest decimal strictly inside each integer's rounding interval (nearest of
    that length). Rounding away one digit more keeps a decimal inside only if one digit
    less did too: from 17 digits (always inside) up, each row stops at its first miss."""
    place = pc.subtract(pc.utf8_length(pc.cast(exact, pa.string())), 1).to_numpy()
    start = np.maximum(place - 16, 0)
    found = pa.nulls(len(exact), _EXACT)
    done = np.zeros(len(exact), dtype=bool)
    for removed in range(int(start.min()), int(place.max()) + 2):
        active = ~done & (start <= removed)
        rows = pa.array(active)
        value, gap, half = (pc.filter(column, rows) for column in (exact, ulp, below))
        down = pc.round(value, ndigits=-removed, round_mode="down")
        up = pc.round(value, ndigits=-removed, round_mode="up")
        inside_down = pc.less(_twice(pc.subtract(value, down), half), gap)
        inside_up = pc.less(_twice(pc.subtract(up, value)), gap)
        nearest = pc.round(value, ndigits=-removed, round_mode="half_to_even")
        chosen = pc.if_else(
            pc.and_(inside_down, inside_up), nearest, pc.if_else(inside_down, down, up)
        )
        inside = pc.or_(inside_down, inside_up).to_numpy(zero_copy_only=False)
        kept = np.zeros(len(exact), dtype=bool)
        kept[np.flatnonzero(active)[inside]] = True
        found = pc.replace_with_mask(found, pa.array(kept), pc.filter(chosen, inside).cast(_EXACT))
        done[np.flatnonzero(active)[~inside]] = True
        if done.all():
            break
    return found


def _twice(gap: pa.Array, below: pa.Array | None = None) -> pa.Array:
    """2 * ``gap``, 4 * ``gap`` where ``below`` (a gap below a power of two)."""
    twice = pc.add(gap, gap)
    return twice if below is None else pc.if_else(below, pc.add(twice, twice), twice)


def _halves(text: pa.Array, separator: str) -> tuple[pa.Array, pa.Array]:
    """``text`` before and after its first ``separator`` (after: '' when there is none)."""
    parts = pc.split_pattern(
        pc.binary_join_element_wise(text, separator, ""), separator, max_splits=1
    )
    after = pc.list_element(parts, 1)
    return pc.list_element(parts, 0), pc.utf8_slice_codeunits(after, 0, -1)


def _exponential(digits: pa.Array, exponent: pa.Array) -> pa.Array:
    """``d.ddde±XX``: ``1e+20``, ``1.5e-07``."""
    first = pc.utf8_slice_codeunits(digits, 0, 1)
    rest = pc.utf8_slice_codeunits(digits, 1)
    point = pc.if_else(pc.equal(rest, ""), "", ".")
    sign = pc.if_else(pc.less(exponent, 0), "e-", "e+")
    power = pc.utf8_lpad(pc.cast(pc.abs(exponent), pa.string()), 2, "0")
    return pc.binary_join_element_wise(first, point, rest, sign, power, "")


def _positional(digits: pa.Array, exponent: pa.Array) -> pa.Array:
    """``digits`` with the point after the digit of ``exponent`` (zeros added as needed),
    written once per exponent (those Arrow writes exponentially: 1e10 to 1e15)."""
    written = pa.nulls(len(digits), pa.string())
    for power in pc.unique(exponent).to_pylist():
        if power < 0:
            text = pc.binary_join_element_wise("0." + "0" * (-power - 1), digits, "")
        else:
            padded = pc.utf8_rpad(digits, power + 1, "0")
            whole = pc.utf8_slice_codeunits(padded, 0, power + 1)
            fraction = pc.utf8_slice_codeunits(padded, power + 1)
            point = pc.if_else(pc.equal(fraction, ""), "", ".")
            text = pc.binary_join_element_wise(whole, point, fraction, "")
        written = pc.if_else(pc.equal(exponent, power), text, written)
    return written


FLOAT8_TEXT = "kyma_float8_text"
FLOAT4_TEXT = "kyma_float4_text"
FUNCTIONS = (
    udf(postgres_text, [pa.float64()], pa.string(), "immutable", name=FLOAT8_TEXT),
    udf(postgres_text, [pa.float32()], pa.string(), "immutable", name=FLOAT4_TEXT),
)
