"""The Parquet writer: one row group per block, kyma's statistics in the footer's metadata."""

from __future__ import annotations

import json

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
from kyma.engine.format.predicate import BlockStats
from kyma.engine.storage import ObjectStore


class ParquetExtentWriter(BlockedWriter):
    format_name = "parquet"

    def __init__(
        self, store: ObjectStore, schema: pa.Schema, path_prefix: str, block_rows: int
    ) -> None:
        super().__init__(store, schema, path_prefix, block_rows)
        self._file = pq.ParquetWriter(str(self._staging), schema, **writer_options(schema))
        self._closed = False

    def _write_block(self, batch: pa.RecordBatch, stats: BlockStats) -> None:
        self._file.write_batch(batch, row_group_size=max(batch.num_rows, 1))

    def _seal(self) -> None:
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
            self._file.close()
