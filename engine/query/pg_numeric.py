"""Postgres's numeric division, for decimals evaluated in kyma, vectorized over Arrow arrays.

DataFusion divides decimals with a fixed result scale and truncates; Postgres picks the scale
of every quotient from its operands (``select_div_scale``: at least 16 significant digits,
never fewer decimals than either operand) and rounds half away from zero. Two session
functions compute it (the rewrite ``postgres_semantics`` calls them; ``avg(x)`` is
``sum(x) / count(x)`` divided so, as Postgres's ``numeric_avg`` does):

- ``kyma_numeric_div(a, b, typeof(a), typeof(b))``: ``decimal128(38, 20)``, each quotient
  rounded to its own scale, so it equals Postgres's by value. A quotient that needs more than
  20 decimals or 18 integer digits raises rather than rounds.
- ``kyma_numeric_div_text(…)``: the quotient as text with its own scale, as Postgres writes
  it (``'25.9370629370629371'``, ``'0.33333333333333333333'``): where a quotient becomes text.
- ``kyma_numeric_div_column(…)``: the same text in a column marked numeric (``NUMERIC``
  field metadata): a quotient returned as a result column, which the result encoders send
  as Postgres's numeric with each value's digits (``decimals`` makes it an Arrow decimal).

Each value's scale comes from the base-10000 weight and leading digit of its operands, read
from their digits as text; the quotient is Arrow's exact truncated decimal division at one
more decimal than the largest scale, then rounded once per distinct scale (a handful).
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf

from kyma.engine.errors import DivisionByZeroError, UnsupportedStatementError
from kyma.engine.types import KYMA_TYPE_KEY

RESULT = pa.decimal128(38, 20)
ARGUMENT = pa.decimal128(38, 10)
"""Operands arrive coerced to this type: 28 integer digits, 10 decimals (Postgres's
numeric(15,2), numeric(30,10) and their products fit)."""
_MIN_SIG_DIGITS = 16  # Postgres's NUMERIC_MIN_SIG_DIGITS
_MAX_DISPLAY_SCALE = 1000  # NUMERIC_MAX_DISPLAY_SCALE
_WIDEST = 76  # Decimal256's digits


def _unscaled(values: pa.Array) -> pa.Array:
    """The decimal ``values`` as their unscaled integers (the same buffers, scale 0)."""
    integers = pa.decimal128(38, 0) if values.type.bit_width == 128 else pa.decimal256(76, 0)
    return pa.Array.from_buffers(
        integers, len(values), values.buffers(), values.null_count, values.offset
    )


def _weights(unscaled: pa.Array, scale: int) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Postgres's base-10000 weight and leading base-10000 digit of each value (0 and 0 for
    zero), and the number of decimal digits of its unscaled integer.

    >>> from decimal import Decimal
    >>> values = pa.array([Decimal("14836.00"), Decimal("572"), Decimal("0.05"), 0], ARGUMENT)
    >>> [w.to_pylist() for w in _weights(_unscaled(values), ARGUMENT.scale)][:2]
    [[1, 0, -1, 0], [1, 572, 500, 0]]
    """
    digits = pc.abs(unscaled).cast(pa.string())
    length = pc.utf8_length(digits).cast(pa.int64())
    exponent = pc.subtract(length, 1 + scale)  # of the leading decimal digit
    weight = pc.floor(pc.divide(exponent.cast(pa.float64()), 4.0)).cast(pa.int64())
    within = pc.subtract(exponent, pc.multiply(weight, 4))  # 0..3
    leading = pc.utf8_rpad(pc.utf8_slice_codeunits(digits, 0, 4), 4, "0").cast(pa.int64())
    first = pc.divide(leading, pc.power(10, pc.subtract(3, within)))
    zero = pc.equal(digits, "0")
    return pc.if_else(zero, 0, weight), pc.if_else(zero, 0, first), length


def _scales(
    dividend: pa.Array, divisor: pa.Array, declared: tuple[int, int]
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """``select_div_scale`` of each pair; the digits of both unscaled operands."""
    weight1, first1, digits1 = _weights(dividend, ARGUMENT.scale)
    weight2, first2, digits2 = _weights(divisor, ARGUMENT.scale)
    below = pc.less_equal(first1, first2).cast(pa.int64())
    quotient_weight = pc.subtract(pc.subtract(weight1, weight2), below)
    scale = pc.subtract(_MIN_SIG_DIGITS, pc.multiply(quotient_weight, 4))
    floor = max(*declared, 0)
    return (
        pc.min_element_wise(pc.max_element_wise(scale, floor), _MAX_DISPLAY_SCALE),
        digits1,
        digits2,
    )


def _quotients(
    dividend: pa.Array, divisor: pa.Array, declared: tuple[int, int], limit: int
) -> tuple[pa.Array, pa.Array]:
    """Each quotient truncated to one decimal more than the largest scale (a decimal256
    array; NULL where an operand is), and each quotient's scale (at most ``limit``)."""
    both = pc.and_(pc.is_valid(dividend), pc.is_valid(divisor))
    dividend, divisor = pc.filter(dividend, both), pc.filter(divisor, both)
    top, bottom = _unscaled(dividend), _unscaled(divisor)
    if pc.any(pc.equal(bottom.cast(pa.string()), "0")).as_py():
        raise DivisionByZeroError("division by zero")
    scales, digits1, digits2 = _scales(top, bottom, declared)
    most = pc.max(scales).as_py() or 0
    if most > limit:
        raise too_long()
    width1, width2 = pc.max(digits1).as_py() or 1, pc.max(digits2).as_py() or 1
    extra = max(0, most - width2)  # Arrow's quotient has (extra + width2 + 1) decimals
    if width1 + extra + width2 + 1 > _WIDEST:
        raise too_long()
    top = top.cast(pa.decimal256(width1, 0)).cast(pa.decimal256(width1 + extra, extra))
    quotient = pc.divide(top, bottom.cast(pa.decimal256(width2, 0)))
    return _spread(quotient, both), _spread(scales, both)


def _spread(values: pa.Array, valid: pa.Array) -> pa.Array:
    """``values`` (one per valid row) back at the rows of ``valid``, NULL elsewhere."""
    if pc.all(valid).as_py() is not False:
        return values
    positions = pc.subtract(pc.cumulative_sum(valid.cast(pa.int64())), 1)
    return pc.take(values, pc.if_else(valid, positions, None))


def _rounded(quotient: pa.Array, scales: pa.Array, write: pa.DataType | None) -> pa.Array:
    """Each quotient rounded half away from zero to its scale, as ``RESULT`` (``write``
    None) or as text; one pass per distinct scale."""
    out = pa.nulls(len(quotient), RESULT if write is None else pa.string())
    for scale in pc.unique(scales.drop_null()).to_pylist():
        rows = pc.fill_null(pc.equal(scales, scale), False)
        rounded = pc.round(pc.filter(quotient, rows), scale, round_mode="half_towards_infinity")
        if write is None:
            try:
                value = rounded.cast(RESULT)
            except pa.ArrowInvalid:
                raise too_long() from None
        else:
            kind = quotient.type
            exact = rounded.cast(pa.decimal256(kind.precision - kind.scale + scale, scale))
            value = _text(_unscaled(exact), scale)
        out = pc.replace_with_mask(out, rows, value)
    return out


def _text(unscaled: pa.Array, scale: int) -> pa.Array:
    """Decimals (their unscaled integers) written with ``scale`` decimals, as Postgres does
    (Arrow writes ``0E-20`` and ``1E-8``).

    >>> _text(pa.array([0, -5, 12345, -1234567], pa.decimal128(38, 0)), 3).to_pylist()
    ['0.000', '-0.005', '12.345', '-1234.567']
    """
    written = unscaled.cast(pa.string())
    digits = pc.utf8_lpad(pc.utf8_ltrim(written, characters="-"), scale + 1, "0")
    if scale:
        whole = pc.utf8_slice_codeunits(digits, 0, -scale)
        digits = pc.binary_join_element_wise(whole, pc.utf8_slice_codeunits(digits, -scale), ".")
    sign = pc.if_else(pc.starts_with(written, "-"), "-", "")
    return pc.binary_join_element_wise(sign, digits, "")


def too_long() -> UnsupportedStatementError:
    return UnsupportedStatementError(
        "a numeric quotient needs more than 20 decimals or 18 integer digits; push the"
        " division to the source, cast its operands or the quotient to text"
    )


def _declared_scale(arrow_type: pa.Array) -> int:
    """The scale in ``arrow_typeof``'s text: ``Decimal128(15, 2)`` → 2; integers → 0."""
    if not len(arrow_type):
        return 0
    found = re.search(r"Decimal(?:128|256)\(\d+, (\d+)\)", str(arrow_type[0]))
    return int(found.group(1)) if found else 0


def numeric_div(
    dividend: pa.Array, divisor: pa.Array, dividend_type: pa.Array, divisor_type: pa.Array
) -> pa.Array:
    """``dividend / divisor`` as Postgres's numeric_div computes it, as ``RESULT``.

    >>> from decimal import Decimal
    >>> div = lambda a, b: numeric_div(pa.array(a, ARGUMENT), pa.array(b, ARGUMENT),
    ...                                pa.array(["Decimal128(7, 2)"]), pa.array(["Int64"]))
    >>> div([Decimal("14836.00"), None, 1], [572, 3, 3]).to_pylist()
    [Decimal('25.93706293706293710000'), None, Decimal('0.33333333333333333333')]
    """
    declared = (_declared_scale(dividend_type), _declared_scale(divisor_type))
    quotient, scales = _quotients(dividend, divisor, declared, RESULT.scale)
    return _rounded(quotient, scales, None)


def numeric_div_text(
    dividend: pa.Array, divisor: pa.Array, dividend_type: pa.Array, divisor_type: pa.Array
) -> pa.Array:
    """``dividend / divisor`` as Postgres writes the numeric quotient.

    >>> from decimal import Decimal
    >>> div = lambda a, b: numeric_div_text(pa.array(a, ARGUMENT), pa.array(b, ARGUMENT),
    ...                                     pa.array(["Decimal128(7, 2)"]), pa.array(["Int64"]))
    >>> div([Decimal("14836.00"), 1, -2], [572, 3, 3]).to_pylist()
    ['25.9370629370629371', '0.33333333333333333333', '-0.66666666666666666667']
    >>> div([0], [7]).to_pylist()
    ['0.00000000000000000000']
    """
    declared = (_declared_scale(dividend_type), _declared_scale(divisor_type))
    quotient, scales = _quotients(dividend, divisor, declared, _WIDEST - 1)
    return _rounded(quotient, scales, pa.string())


NUMERIC = {KYMA_TYPE_KEY: b"numeric"}
"""The field metadata of a result column of numerics written as text, each with its scale."""


def is_numeric_text(field: pa.Field) -> bool:
    return (field.metadata or {}).get(KYMA_TYPE_KEY) == NUMERIC[KYMA_TYPE_KEY]


def decimals(table: pa.Table) -> pa.Table:
    """``table`` with each numeric text column as an Arrow decimal (one scale a column: the
    largest of its values; the values exact), for answers that leave as Arrow data.

    >>> marked = pa.field("q", pa.string(), metadata=NUMERIC)
    >>> out = decimals(pa.table([pa.array(["1.5", None, "-0.25"])], schema=pa.schema([marked])))
    >>> out.schema.field("q").type, out.column("q").to_pylist()
    (Decimal128Type(decimal128(38, 2)), [Decimal('1.50'), None, Decimal('-0.25')])
    """
    fields = list(table.schema)
    columns = list(table.columns)
    for i, field in enumerate(fields):
        if not is_numeric_text(field):
            continue
        kind = _decimal_of(columns[i])
        columns[i] = columns[i].cast(kind)
        fields[i] = pa.field(field.name, kind, field.nullable)
    if fields == list(table.schema):
        return table
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, table.schema.metadata))


def _decimal_of(texts: pa.ChunkedArray) -> pa.DataType:
    """The narrowest of ``RESULT``'s precision (or Decimal256's) holding every value."""
    digits = pc.utf8_ltrim(texts, characters="-")
    point, length = pc.find_substring(digits, "."), pc.utf8_length(digits)
    scale = pc.max(pc.if_else(pc.less(point, 0), 0, pc.subtract(length, pc.add(point, 1))))
    whole = pc.max(pc.if_else(pc.less(point, 0), length, point))
    scale_, whole_ = scale.as_py() or 0, whole.as_py() or 1
    if scale_ + whole_ <= RESULT.precision:
        return pa.decimal128(RESULT.precision, scale_)
    return pa.decimal256(_WIDEST, scale_)


DIV = "kyma_numeric_div"
DIV_TEXT = "kyma_numeric_div_text"
DIV_COLUMN = "kyma_numeric_div_column"
_KINDS = [ARGUMENT, ARGUMENT, pa.string(), pa.string()]
FUNCTIONS = (
    udf(numeric_div, _KINDS, RESULT, "immutable", name=DIV),
    udf(numeric_div_text, _KINDS, pa.string(), "immutable", name=DIV_TEXT),
    udf(
        numeric_div_text,
        _KINDS,
        pa.field(DIV_COLUMN, pa.string(), metadata=NUMERIC),
        "immutable",
        name=DIV_COLUMN,
    ),
)
"""Built once; registered on each session by ``udfs.register``."""
