"""The Parquet writer: one row group per block, kyma's statistics in the footer's metadata.

Blocks are encoded on a worker thread (pyarrow releases the GIL) while the next block's
statistics are computed: the two overlap on two cores.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from kyma.engine.format._blocked import BlockedWriter
from kyma.engine.format.parquet._layout import (
    BLOCK_STATS_KEY,
    COLUMN_STATS_KEY,
    FORMAT_VERSION,
    PRESENT_PATHS_KEY,
    VERSION_KEY,
    writer_options,
)
from kyma.engine.storage import ObjectStore


class ParquetExtentWriter(BlockedWriter):
    format_name = "parquet"

    def __init__(
        self, store: ObjectStore, schema: pa.Schema, path_prefix: str, block_rows: int
    ) -> None:
        super().__init__(store, schema, path_prefix, block_rows)
        self._file = pq.ParquetWriter(str(self._staging), schema, **writer_options(schema))
        self._encoder = ThreadPoolExecutor(1, thread_name_prefix="kyma-parquet")
        self._written: Future[None] | None = None
        self._closed = False

    def _write_block(self, batch: pa.RecordBatch) -> None:
        self._wait()  # one block in flight: memory stays bounded
        self._written = self._encoder.submit(
            self._file.write_batch, batch, row_group_size=max(batch.num_rows, 1)
        )

    def _wait(self) -> None:
        if self._written is not None:
            written, self._written = self._written, None
            written.result()

    def _seal(self) -> None:
        self._wait()
        stats = self._extent_stats
        compact = {"separators": (",", ":")}
        self._file.add_key_value_metadata(
            {
                VERSION_KEY: FORMAT_VERSION,
                BLOCK_STATS_KEY: json.dumps(self._blocks, **compact),
                COLUMN_STATS_KEY: json.dumps(stats.column_stats(), default=str, **compact),
                PRESENT_PATHS_KEY: json.dumps(stats.present_paths(), **compact),
            }
        )
        self._close()

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._wait()
            finally:
                self._encoder.shutdown()
                self._file.close()
