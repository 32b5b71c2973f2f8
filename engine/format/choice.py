"""The one place that picks a format: new extents in the chosen one, reads in any.

Every extent stays readable forever: ``open_extent`` dispatches on the object's suffix
(``.parquet``, ``.tlm``), else on its leading magic bytes (``PAR1``, ``KYMA``).
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.errors import ConfigError, FormatError
from kyma.engine.format import ExtentReader, ExtentWriter, SegmentFormat
from kyma.engine.format.parquet import DEFAULT_BLOCK_ROWS, MAGIC, ParquetFormat
from kyma.engine.format.tlm import TlmFormat
from kyma.engine.storage import ObjectStore

FORMATS = ("parquet", "tlm")
DEFAULT_FORMAT = "parquet"


class ExtentFormats(SegmentFormat):
    """Writes with ``writes``; reads every format kyma ever wrote."""

    def __init__(self, writes: SegmentFormat) -> None:
        self.writes = writes
        self.name = writes.name
        self._readers: dict[str, SegmentFormat] = {"parquet": ParquetFormat(), "tlm": TlmFormat()}

    def format_of(self, store: ObjectStore, object_path: str) -> str:
        """``parquet`` or ``tlm``: by suffix, else by the object's magic bytes."""
        suffix = object_path.rpartition(".")[2]
        if suffix in self._readers:
            return suffix
        head = store.get_range(object_path, 0, 4)
        if head == MAGIC:
            return "parquet"
        if head == b"KYMA":
            return "tlm"
        raise FormatError(
            f"extent {object_path!r}: neither a .parquet nor a .tlm object (starts {head!r})"
        )

    def open_extent(self, store: ObjectStore, object_path: str) -> ExtentReader:
        return self._readers[self.format_of(store, object_path)].open_extent(store, object_path)

    def start_extent(self, store: ObjectStore, schema: pa.Schema, path_prefix: str) -> ExtentWriter:
        return self.writes.start_extent(store, schema, path_prefix)


def segment_format(
    name: str = DEFAULT_FORMAT, block_rows: int = DEFAULT_BLOCK_ROWS
) -> ExtentFormats:
    """The format of ``KYMA_EXTENT_FORMAT`` writing blocks of ``block_rows``; reads any."""
    if name == "parquet":
        return ExtentFormats(ParquetFormat(block_rows=block_rows))
    if name == "tlm":
        return ExtentFormats(TlmFormat(block_rows=block_rows))
    raise ConfigError(f"KYMA_EXTENT_FORMAT: expected one of {FORMATS}, got {name!r}")
