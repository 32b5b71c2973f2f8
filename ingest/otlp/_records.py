"""A request's records read field by field: one list comprehension per field, then Arrow.

The converters of logs and spans read each field of every record into a list in one pass
(``[r.name for r in records]``: protobuf can only be read in Python, this is its cheapest
form), and check and convert the lists as arrays: ids to hex, times to timestamps, empty
strings to null. A record a check fails is left out of the batch (``Checked``); the first
one's reason, found again with ``_values``'s per-value checks, is the partial-success message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._values import MAX_NANOS, Context, Converted, Rejected

_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
TIMESTAMP = pa.timestamp("ns", tz="UTC")


def records(groups: Any, scopes: str, items: str) -> tuple[list[Any], dict[str, pa.Array]]:
    """Every record of a request (``groups``: its resource_logs or resource_spans), and
    their resource and scope columns."""
    found: list[Any] = []
    contexts: list[Context] = []
    counts: list[int] = []
    for group in groups:
        for scope in getattr(group, scopes):
            held = getattr(scope, items)
            found.extend(held)
            contexts.append(Context.of(group.resource, scope.scope))
            counts.append(len(held))
    of_row = pa.array(np.repeat(np.arange(len(contexts), dtype=np.int64), counts))
    columns = {}
    for name in Context.__dataclass_fields__:
        kind = pa.binary() if name.endswith("attributes") else pa.string()
        columns[name] = pa.array([getattr(c, name) for c in contexts], kind).take(of_row)
    return found, columns


def hex_ids(raw: list[bytes], size: int) -> tuple[pa.Array, np.ndarray]:
    """Trace or span ids as lowercase hex, null when empty; and which are not ``size`` bytes."""
    array = pa.array(raw, pa.binary())
    lengths = pc.binary_length(array).to_numpy()
    good = lengths == size
    bad = (lengths != 0) & ~good
    whole = array if good.all() else array.filter(pa.array(good))
    offsets = np.frombuffer(whole.buffers()[1], np.int32)[whole.offset :]
    data = np.frombuffer(whole.buffers()[2], np.uint8)[offsets[0] : offsets[0] + len(whole) * size]
    hexed = np.empty((len(data), 2), np.uint8)
    hexed[:, 0] = _HEX[data >> 4]
    hexed[:, 1] = _HEX[data & 15]
    bounds = np.arange(0, 2 * size * len(whole) + 1, 2 * size, dtype=np.int32)
    text = pa.Array.from_buffers(
        pa.string(), len(whole), [None, pa.py_buffer(bounds), pa.py_buffer(hexed)]
    )
    if len(whole) < len(raw):
        where = np.cumsum(good) - 1
        text = text.take(pa.array(where, mask=~good))
    return text, bad


def times(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Epoch nanoseconds as int64 (0: unset), and which are past the latest timestamp."""
    raw = np.array(values, np.uint64)
    late = raw > MAX_NANOS
    return np.where(late, 0, raw).astype(np.int64), late


def timestamps(nanos: np.ndarray) -> pa.Array:
    """A timestamp column, null where ``nanos`` is 0."""
    return pa.array(nanos, TIMESTAMP, mask=nanos == 0)


def blank_null(values: list[str]) -> pa.Array:
    """A string column, null where the value is empty (proto3's unset)."""
    array = pa.array(values, pa.string())
    return pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)


def named(codes: list[int], names: dict[int, str]) -> pa.Array:
    """Enum numbers as their names; a number without one as its digits."""
    known = [names.get(i, str(i)) for i in range(max(names) + 1)]
    numbers = np.array(codes, np.int64)
    if len(numbers) and (numbers.min() < 0 or numbers.max() >= len(known)):
        return pa.array([names.get(c, str(c)) for c in codes], pa.string())
    return pa.array(known, pa.string()).take(pa.array(numbers))


class Checked:
    """The columns of a request's records, and the rows a check left out."""

    def __init__(self, what: str, records: list[Any]) -> None:
        self.what = what
        self.records = records
        self.bad = np.zeros(len(records), np.bool_)
        self._checks: list[tuple[np.ndarray, Callable[[Any], object]]] = []

    def check(self, bad: np.ndarray, again: Callable[[Any], object]) -> None:
        """Leave out the ``bad`` rows; ``again(record)`` raises Rejected with the reason."""
        self.bad |= bad
        self._checks.append((bad, again))

    def converted(self, schema: pa.Schema, columns: dict[str, pa.Array]) -> Converted:
        batch = pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)
        if not self.bad.any():
            return Converted(batch)
        first = int(np.argmax(self.bad))
        reason = ""
        for bad, again in self._checks:
            if bad[first]:
                try:
                    again(self.records[first])
                except Rejected as e:
                    reason = str(e)
                    break
        kept = batch.filter(pa.array(~self.bad))
        return Converted(kept, int(self.bad.sum()), f"{self.what} {first + 1}: {reason}")
