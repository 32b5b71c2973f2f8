"""Metrics export requests → one Arrow batch: a group converted once, on the thread
that commits it.

Each request still gets its own answer: its rejected records are counted on their own, and a
request whose records cannot be converted (a value past its column's range, or any error
while it is walked) fails alone, its rows taken out again; the others of the group go on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from kyma.engine.errors import IngestError
from kyma.engine.types import Column

from ._values import Columns, Outcome

Fill = Callable[[Columns, Any], None]
"""Appends the rows of one request to the columns (``_metrics.fill_metrics``)."""


def convert(
    what: str, columns: tuple[Column, ...], fill: Fill, requests: Sequence[Any]
) -> tuple[pa.RecordBatch, list[Outcome | Exception]]:
    """One batch of every kept record of ``requests`` (named ``what`` in errors, e.g.
    "spans"), and per request its outcome, or the error it alone fails with."""
    table = Columns(columns)
    lists = list(table.lists.values())
    outcomes: list[Outcome | Exception] = []
    bounds = [0]  # request i holds rows bounds[i]:bounds[i + 1]
    for request in requests:
        table.start()
        try:
            fill(table, request)
            outcomes.append(table.outcome())
        except Exception as e:  # this request's rows out again, the group goes on
            for values in lists:
                del values[bounds[-1] :]
            outcomes.append(_refused(what, e))
        bounds.append(len(lists[0]))
    try:
        return table.batch(), outcomes
    except (pa.ArrowInvalid, OverflowError):
        return _one_by_one(what, table, bounds, outcomes)


def _one_by_one(
    what: str, table: Columns, bounds: list[int], outcomes: list[Outcome | Exception]
) -> tuple[pa.RecordBatch, list[Outcome | Exception]]:
    """The batch without the requests whose values do not fit their columns (the slow path,
    taken only when the whole group did not convert)."""
    kept = []
    for index, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
        if isinstance(outcomes[index], Exception) or start == end:
            continue
        arrays = []
        try:
            for field in table.schema:
                arrays.append(pa.array(table.lists[field.name][start:end], field.type))
        except (pa.ArrowInvalid, OverflowError) as e:
            outcomes[index] = _refused(what, e)
            continue
        kept.append(pa.RecordBatch.from_arrays(arrays, schema=table.schema))
    if not kept:
        return pa.RecordBatch.from_pylist([], schema=table.schema), outcomes
    return pa.concat_batches(kept), outcomes


def _refused(what: str, error: Exception) -> Exception:
    if isinstance(error, (pa.ArrowInvalid, OverflowError)):  # e.g. a count past Int64
        refused = IngestError(f"the {what} cannot be stored: {error}")
        refused.__cause__ = error
        return refused
    return error
