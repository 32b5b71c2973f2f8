"""parquet: kyma's extent format since Phase B; every extent is a standard Parquet file.

One row group per block; kyma's block statistics, column statistics and dynamic paths sit in
the footer's key-value metadata (``kyma.block_stats``, ``kyma.column_stats``,
``kyma.present_paths``), so DuckDB, Spark, DataFusion and pyarrow read an extent as it is.
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.format import ExtentReader, ExtentWriter, SegmentFormat
from kyma.engine.format.parquet._reader import ParquetExtentReader
from kyma.engine.format.parquet._writer import ParquetExtentWriter
from kyma.engine.storage import ObjectStore

DEFAULT_BLOCK_ROWS = 131_072
"""Rows per block (one row group); BENCHMARKS.md (bench/row_groups.py) has the measurements."""
MAGIC = b"PAR1"


class ParquetFormat(SegmentFormat):
    name = "parquet"

    def __init__(
        self, block_rows: int = DEFAULT_BLOCK_ROWS, shred_paths: int | None = None
    ) -> None:
        """``shred_paths``: paths per dynamic column stored as typed sub-columns
        (default ``SHRED_PATHS``, 256; 0 turns shredding off)."""
        if block_rows <= 0:
            raise ValueError(f"block_rows must be positive, got {block_rows!r}")
        self.block_rows = block_rows
        self.shred_paths = shred_paths

    def open_extent(self, store: ObjectStore, object_path: str) -> ExtentReader:
        return ParquetExtentReader(store, object_path)

    def start_extent(self, store: ObjectStore, schema: pa.Schema, path_prefix: str) -> ExtentWriter:
        return ParquetExtentWriter(store, schema, path_prefix, self.block_rows, self.shred_paths)
