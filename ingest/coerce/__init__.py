"""NDJSON → an Arrow batch of a table's columns, by the coercion table of the ingest seed.

Two readers with identical results: a fast path (one ``pyarrow.json.read_json`` plus
vectorized checks, per-row Python only for dynamic, props and odd-shaped fields) and the
dedicated slow reader (one line at a time in Python), which runs whenever the fast path
cannot vouch for its answer and words every :class:`~kyma.engine.errors.IngestError`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kyma.engine.types import Column

from ._fast import coerce_fast
from ._lines import Lines, scan
from ._model import Coerced
from ._shape import check_shape
from ._slow import coerce_rows
from ._values import overflow_fields

__all__ = ["Coerced", "Lines", "check_shape", "coerce_ndjson", "scan"]


def coerce_ndjson(
    body: bytes,
    columns: Sequence[Column],
    *,
    props_fields: Collection[str] = (),
    ingest_time_ns: int,
    lines: Lines | None = None,
    deferred: bool = False,
) -> Coerced:
    """Coerce an NDJSON body (already decompressed) to a batch of ``columns``.

    Fields that are neither columns nor ``props_fields`` are dropped; ``props_fields`` are
    merged into the row's ``props`` object. A missing or null ``_timestamp`` becomes
    ``ingest_time_ns``. Raises IngestError naming the first offending line and field.
    ``lines``: what ``check_shape`` returned for the body, if it ran (one pass over the
    body then serves both). ``deferred``: the rows of dynamic columns that
    ``Coerced.parsed`` vouches for hold no bytes in the batch -- only for a batch handed to
    ``ExtentWriter.append`` with its parsed columns, which encodes the CBOR it stores.
    """
    overflow = overflow_fields(columns, props_fields)
    fast = coerce_fast(body, columns, overflow, ingest_time_ns, lines, deferred)
    if fast is not None:
        return fast
    return coerce_rows(body, columns, props_fields=overflow, ingest_time_ns=ingest_time_ns)
