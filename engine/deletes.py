"""Deletion vectors: the positions of an extent's deleted rows, as a Roaring bitmap.

A DELETE does not rewrite extents: it commits, per extent it touched, a copy of the
extent's manifest row carrying every deleted position (those of earlier deletes too) as a
serialized bitmap (pyroaring's portable format, the one Iceberg's deletion vectors use);
every reader drops those rows (``keep``). VACUUM and compaction rewrite extents without
them. Measured on 1 M-row extents, Roaring takes 84 bytes for 10 deletes, 2 KB for 1 000,
at most ~130 KB whatever the count (a run of deleted rows: 61 bytes), and decodes in
under 3 ms; sorted uint32 positions compressed with zstd took 2–10x the bytes at 1 000
deletes and more, and 500 KB for one contiguous run of 200 000.

>>> vector, count = merge(None, np.array([3, 1], dtype=np.uint32))
>>> count, positions(vector).tolist()
(2, [1, 3])
>>> keep(pa.record_batch({"a": [10, 11, 12, 13]}), positions(vector), 0)["a"].to_pylist()
[10, 12]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

ROW_COLUMNS = ("__kyma_extent", "__kyma_row")
"""Hidden columns a DELETE's scan adds: the extent id and the row's position in it."""


def positions(vector: bytes | None) -> np.ndarray | None:
    """The deleted positions, sorted (None: no vector)."""
    if vector is None:
        return None
    return np.frombuffer(BitMap.deserialize(bytes(vector)).to_array(), dtype=np.uint32)


def merge(vector: bytes | None, new: np.ndarray) -> tuple[bytes, int]:
    """``vector`` with the positions ``new`` added: (serialized, positions held)."""
    bitmap = BitMap.deserialize(bytes(vector)) if vector is not None else BitMap()
    bitmap.update(new.astype(np.uint32, copy=False))
    bitmap.run_optimize()
    return bitmap.serialize(), len(bitmap)


def block_starts(block_rows: list[int]) -> list[int]:
    """The position of each block's first row in its extent."""
    return np.concatenate([[0], np.cumsum(block_rows, dtype=np.int64)[:-1]]).tolist()


def live_rows(block_rows: list[int], deleted: np.ndarray | None) -> list[int]:
    """Rows of each block that are not deleted."""
    if deleted is None:
        return block_rows
    ends = np.cumsum(block_rows, dtype=np.int64)
    gone = np.diff(np.searchsorted(deleted, ends), prepend=0)
    return (np.asarray(block_rows, dtype=np.int64) - gone).tolist()


def keep_array(array: pa.Array, deleted: np.ndarray, start: int) -> pa.Array:
    """``keep`` of one column."""
    return keep(pa.record_batch([array], names=["a"]), deleted, start).column(0)


def keep(batch: pa.RecordBatch, deleted: np.ndarray | None, start: int) -> pa.RecordBatch:
    """The rows of ``batch`` (whose first row is row ``start`` of its extent) not deleted."""
    if deleted is None:
        return batch
    lo, hi = np.searchsorted(deleted, [start, start + batch.num_rows])
    if lo == hi:
        return batch
    mask = np.ones(batch.num_rows, dtype=bool)
    mask[deleted[lo:hi].astype(np.int64) - start] = False
    return batch.filter(pa.array(mask))


def with_rows(
    batch: pa.RecordBatch, deleted: np.ndarray | None, start: int, extent_id: str
) -> pa.RecordBatch:
    """``keep`` with ``ROW_COLUMNS`` appended: the extent's id and each row's position."""
    rows = pa.array(np.arange(start, start + batch.num_rows, dtype=np.int64))
    ids = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(batch.num_rows, dtype=np.int32)), pa.array([extent_id])
    ).cast(pa.string())
    widened = pa.RecordBatch.from_arrays(
        [*batch.columns, ids, rows], names=[*batch.schema.names, *ROW_COLUMNS]
    )
    return keep(widened, deleted, start)
