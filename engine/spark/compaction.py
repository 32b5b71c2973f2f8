"""Compaction's rewrites as Spark tasks: one task per group, the commits on the driver.

``on_spark(session, store, ...)`` is a ``Rewriter`` for ``compact_table``: each group of small
extents is read and written as one extent by a task (``mapInArrow`` over group numbers),
which reports the extent back pickled. ``compact_table`` then commits group by group with
the catalog's CAS, as it does in process. Spark retrying a lost task makes a second object,
never a second commit; the lost attempt's object is an orphan for GC.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import ManifestEntry, TableInfo
from kyma.engine.compaction import Rewriter, rewrite_group
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.config import StoreConfig

OUTPUT = pa.schema([("group", pa.int64()), ("extent", pa.binary())])


def on_spark(
    session: Callable[[], Any], store: StoreConfig, format_name: str, block_rows: int
) -> Rewriter:
    """Groups rewritten by the executors of ``session()``'s Spark into ``store``, in
    ``format_name``; Spark is started only once there is a group to rewrite."""

    def rewrite(info: TableInfo, groups: list[list[ManifestEntry]]) -> list[ExtentWriteResult]:
        if not groups:
            return []
        run = _task(info, groups, store, format_name, block_rows)
        numbers = session().range(len(groups), numPartitions=len(groups))
        frame = numbers.withColumnRenamed("id", "group").mapInArrow(
            run, "group long, extent binary"
        )
        written = {row["group"]: row["extent"] for row in frame.collect()}
        return [pickle.loads(written[i]) for i in range(len(groups))]  # noqa: S301 - our tasks'

    return rewrite


def _task(
    info: TableInfo,
    groups: list[list[ManifestEntry]],
    store: StoreConfig,
    format_name: str,
    block_rows: int,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: group numbers in, one (group, pickled extent) row out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        opened, fmt = store.open(), segment_format(format_name, block_rows)
        for batch in batches:
            for number in batch.column("group").to_pylist():
                merged = rewrite_group(opened, fmt, info, groups[number])
                yield pa.record_batch(
                    [pa.array([number], pa.int64()), pa.array([pickle.dumps(merged)])],
                    schema=OUTPUT,
                )

    return run
