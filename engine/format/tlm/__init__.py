"""tlm: kyma's shipping extent format.

v2 layout, byte for byte::

    MAGIC_V2 || arrow_ipc_file || block_stats_json || stats_len u32 LE || MAGIC_V2

with ``MAGIC_V2 = b"KYMA\\x02"``. Each Arrow record batch is one block. v1 objects
(``KYMA\\x01`` followed by an Arrow IPC file, no footer) stay readable; they keep every block.
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.format import ExtentReader, ExtentWriter, SegmentFormat
from kyma.engine.format.tlm._reader import TlmReader
from kyma.engine.format.tlm._writer import TlmWriter
from kyma.engine.storage import ObjectStore

DEFAULT_BLOCK_ROWS = 8_192  # DataFusion's batch size; fine-grained stage-2 pruning


class TlmFormat(SegmentFormat):
    """The tlm format; ``compression`` ('zstd', 'lz4' or None) applies to Arrow buffers.

    Uncompressed is the default: blocks read from a memory-mapped extent are then zero-copy.
    """

    name = "tlm"

    def __init__(self, block_rows: int = DEFAULT_BLOCK_ROWS, compression: str | None = None):
        if block_rows <= 0:
            raise ValueError(f"block_rows must be positive, got {block_rows!r}")
        self.block_rows = block_rows
        self.compression = compression

    def open_extent(self, store: ObjectStore, object_path: str) -> ExtentReader:
        return TlmReader(store, object_path)

    def start_extent(self, store: ObjectStore, schema: pa.Schema, path_prefix: str) -> ExtentWriter:
        return TlmWriter(store, schema, path_prefix, self.block_rows, self.compression)
