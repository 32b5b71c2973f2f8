"""Postgres's ``extract(epoch FROM interval)``: exact, as numeric with 6 decimals.

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
from datafusion import udf

from kyma.engine.errors import OutOfRangeError

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


FUNCTIONS = (udf(epoch, [pa.month_day_nano_interval()], RESULT, "immutable", name=FUNCTION),)
