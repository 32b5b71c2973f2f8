"""Postgres's interval functions DataFusion computes otherwise, over the MonthDayNano buffer.

- ``kyma_interval_epoch(interval)``: ``extract(epoch FROM interval)``, exact numeric.
- ``kyma_interval_second(interval)`` / ``kyma_timestamp_second(timestamp)``: the seconds
  field with its fraction (``extract(second …)``, numeric with 6 decimals; DataFusion
  drops the fraction).
- ``kyma_interval_mul(interval, factor)`` / ``kyma_interval_div(interval, divisor)``:
  ``interval * n`` and ``interval / n`` (DataFusion has neither), Postgres's cascade of
  fractional months into days and fractional days into time.

``extract(epoch FROM interval)`` is exact, as numeric with 6 decimals:

DataFusion 55 computes the epoch of an interval as a float, of a timestamp difference (a
duration) in whole seconds, and counts a year as 12 months of 30 days. Postgres counts a
year as 365.25 days, a month as 30, a day as 86 400 seconds, and keeps every microsecond:
``extract(epoch FROM interval '1 hour 0.5 seconds')`` is 3600.500000. The rewrite in
``rewrite.postgres_semantics`` calls ``kyma_interval_epoch`` with the interval (a duration
cast to one), a session function (``udfs``); the value is computed from the interval's three
fields with numpy over the Arrow buffer (months, days, nanoseconds per value).

>>> epoch(pa.array([(0, 0, 3_600_500_000_000), (13, -3, 0), None], pa.month_day_nano_interval()))
<pyarrow.lib.Decimal128Array object at ...>
[
  3600.500000,
  33890400.000000,
  null
]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datafusion import udf

from kyma.engine.errors import DivisionByZeroError, OutOfRangeError

RESULT = pa.decimal128(38, 6)
FUNCTION = "kyma_interval_epoch"
_FIELDS = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanoseconds", "<i8")])
_QUARTER_DAYS_PER_YEAR, _QUARTER_DAYS_PER_MONTH, _QUARTER_DAY_SECONDS = 1461, 120, 21_600
_LIMIT = 2**63 - 1


def epoch(intervals: pa.Array) -> pa.Array:
    """Each interval's seconds (Postgres's ``interval_part`` for EPOCH), null for null."""
    fields = np.frombuffer(
        intervals.buffers()[1], _FIELDS, len(intervals), intervals.offset * _FIELDS.itemsize
    )
    months = fields["months"].astype(np.int64)
    years = np.fix(months / 12).astype(np.int64)  # C division: toward zero
    quarter_days = (
        _QUARTER_DAYS_PER_YEAR * years
        + _QUARTER_DAYS_PER_MONTH * (months - 12 * years)
        + 4 * fields["days"].astype(np.int64)
    )
    seconds = quarter_days * _QUARTER_DAY_SECONDS
    micros = np.fix(fields["nanoseconds"] / 1000).astype(np.int64)
    if np.any(np.abs(seconds.astype(np.float64) * 1e6 + micros) >= _LIMIT):
        raise OutOfRangeError("interval out of range for extract(epoch)")
    unscaled = seconds * 1_000_000 + micros
    # decimal128 values: 16 bytes, little-endian two's complement (the high word: the sign)
    words = np.stack([unscaled, np.where(unscaled < 0, -1, 0)], axis=1).astype("<i8")
    valid = intervals.buffers()[0] if intervals.null_count else None
    if valid is not None and intervals.offset:
        valid = pa.array(intervals.is_valid()).buffers()[1]
    return pa.Array.from_buffers(RESULT, len(intervals), [valid, pa.py_buffer(words.tobytes())])


def _fields(intervals: pa.Array) -> np.ndarray:
    return np.frombuffer(
        intervals.buffers()[1], _FIELDS, len(intervals), intervals.offset * _FIELDS.itemsize
    )


def _validity(values: pa.Array) -> pa.Buffer | None:
    if not values.null_count:
        return None
    if values.offset:
        return pa.array(values.is_valid()).buffers()[1]
    return values.buffers()[0]


def _micros_decimal(micros: np.ndarray, values: pa.Array) -> pa.Array:
    """Microseconds as decimal128(38, 6) seconds, nulls where ``values`` has them."""
    words = np.stack([micros, np.where(micros < 0, -1, 0)], axis=1).astype("<i8")
    buffers = [_validity(values), pa.py_buffer(words.tobytes())]
    return pa.Array.from_buffers(RESULT, len(values), buffers)


def interval_second(intervals: pa.Array) -> pa.Array:
    """The seconds field of each interval (Postgres's ``interval_part`` for SECOND: the
    time's microseconds past the minute, the sign of the time).

    >>> interval_second(pa.array([(0, 0, 61_500_000_000), (0, 0, -61_500_000_000)],
    ...     pa.month_day_nano_interval())).to_pylist()
    [Decimal('1.500000'), Decimal('-1.500000')]
    """
    micros = np.fix(_fields(intervals)["nanoseconds"] / 1000).astype(np.int64)
    return _micros_decimal(np.fmod(micros, 60_000_000), intervals)


def timestamp_second(timestamps: pa.Array) -> pa.Array:
    """The seconds field of each timestamp (nanoseconds, UTC), with its microseconds.

    >>> timestamp_second(pa.array([7_250_000_000, -750_000_000], pa.timestamp("ns"))).to_pylist()
    [Decimal('7.250000'), Decimal('59.250000')]
    """
    nanos = np.frombuffer(timestamps.buffers()[1], np.int64, len(timestamps), timestamps.offset)
    return _micros_decimal(np.mod(np.floor_divide(nanos, 1000), 60_000_000), timestamps)


_TS_PREC = 1_000_000.0
_DAYS_PER_MONTH, _SECONDS_PER_DAY = 30, 86_400


def _tsround(value: np.ndarray) -> np.ndarray:
    return np.rint(value * _TS_PREC) / _TS_PREC


def _scaled(intervals: pa.Array, factors: pa.Array, divide: bool) -> pa.Array:
    """Postgres's ``interval_mul`` / ``interval_div``: each field times (or over) its factor,
    the fractions of months cascaded into days and of days into time."""
    fields = _fields(intervals)
    factor = factors.to_numpy(zero_copy_only=False).astype(np.float64)
    if divide and np.any(factor[np.asarray(factors.is_valid())] == 0):
        raise DivisionByZeroError("division by zero")
    months, days = fields["months"].astype(np.float64), fields["days"].astype(np.float64)
    micros = np.fix(fields["nanoseconds"] / 1000)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        month_product = months / factor if divide else months * factor
        day_product = days / factor if divide else days * factor
        time_product = micros / factor if divide else micros * factor
    valid = np.asarray(pc.and_(intervals.is_valid(), factors.is_valid()))
    for product in (month_product, day_product):
        if np.any(valid & (np.isnan(product) | (np.abs(product) > 2**31 - 1))):
            raise OutOfRangeError("interval out of range")
    month = np.where(valid, np.fix(month_product), 0)
    day = np.where(valid, np.fix(day_product), 0)
    month_days = _tsround((month_product - month) * _DAYS_PER_MONTH)
    seconds = _tsround((day_product - day + month_days - np.fix(month_days)) * _SECONDS_PER_DAY)
    carry = np.where(np.abs(seconds) >= _SECONDS_PER_DAY, np.fix(seconds / _SECONDS_PER_DAY), 0)
    day = day + carry + np.fix(month_days)
    seconds = seconds - carry * _SECONDS_PER_DAY
    time = np.rint(time_product + seconds * 1_000_000)
    if np.any(valid & ~(np.abs(time) < 2**63 / 1000)):
        raise OutOfRangeError("interval out of range")
    out = np.zeros(len(intervals), _FIELDS)
    out["months"] = np.where(valid, month, 0)
    out["days"] = np.where(valid, day, 0)
    out["nanoseconds"] = np.where(valid, time, 0).astype(np.int64) * 1000
    mask = None if valid.all() else pa.array(valid).buffers()[1]
    buffers = [mask, pa.py_buffer(out.tobytes())]
    return pa.Array.from_buffers(pa.month_day_nano_interval(), len(intervals), buffers)


def interval_mul(intervals: pa.Array, factors: pa.Array) -> pa.Array:
    """``interval * factor`` as Postgres computes it.

    >>> interval_mul(pa.array([(1, 1, 3_600_000_000_000)], pa.month_day_nano_interval()),
    ...     pa.array([1.5])).to_pylist()
    [MonthDayNano(months=1, days=16, nanoseconds=48600000000000)]
    """
    return _scaled(intervals, factors, divide=False)


def interval_div(intervals: pa.Array, divisors: pa.Array) -> pa.Array:
    """``interval / divisor`` as Postgres computes it; DivisionByZeroError for 0."""
    return _scaled(intervals, divisors, divide=True)


INTERVAL = pa.month_day_nano_interval()
SECOND = "kyma_interval_second"
TIMESTAMP_SECOND = "kyma_timestamp_second"
MUL, DIV = "kyma_interval_mul", "kyma_interval_div"
FUNCTIONS = (
    udf(epoch, [INTERVAL], RESULT, "immutable", name=FUNCTION),
    udf(interval_second, [INTERVAL], RESULT, "immutable", name=SECOND),
    udf(timestamp_second, [pa.timestamp("ns")], RESULT, "immutable", name=TIMESTAMP_SECOND),
    udf(interval_mul, [INTERVAL, pa.float64()], INTERVAL, "immutable", name=MUL),
    udf(interval_div, [INTERVAL, pa.float64()], INTERVAL, "immutable", name=DIV),
)
