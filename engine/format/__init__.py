"""The SegmentFormat seam: how extents are written and read.

Catalog, planner, executor and ingest name only these classes, never a concrete format.
``parquet/`` writes new extents (standard Parquet files), ``tlm/`` extents stay readable, and
``choice.py`` picks the format that writes and dispatches each read on the object's format.
An extent is one immutable object made of blocks (one Arrow record batch each) plus
per-block statistics that ``pruned_blocks`` evaluates.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from kyma.engine.format._parsed import ParsedDynamic
from kyma.engine.format._shred import Shred
from kyma.engine.format.predicate import BlockPredicate, BlockStats
from kyma.engine.storage import ObjectStore

__all__ = [
    "BlockPredicate",
    "BlockStats",
    "ExtentMetadata",
    "ExtentReader",
    "ExtentWriteResult",
    "ExtentWriter",
    "ParsedDynamic",
    "SegmentFormat",
]


@dataclass(frozen=True)
class ExtentWriteResult:
    """What ``finish()`` hands the catalog; every field lands in the manifest row."""

    extent_id: str
    object_path: str
    byte_size: int
    row_count: int
    block_count: int
    min_timestamp_nanos: int | None
    max_timestamp_nanos: int | None
    present_paths: list[str]
    column_stats: dict[str, dict[str, Any]]
    format: str = "tlm"
    """The format's name (``parquet`` or ``tlm``); the catalog records it per extent."""


@dataclass(frozen=True)
class ExtentMetadata:
    object_path: str
    version: int
    byte_size: int
    schema: pa.Schema
    block_count: int
    row_count: int
    block_stats: list[BlockStats] | None = field(default=None)
    """None for formats or versions without block statistics (v1)."""


class ExtentReader(abc.ABC):
    @abc.abstractmethod
    def metadata(self) -> ExtentMetadata: ...

    @abc.abstractmethod
    def pruned_blocks(self, predicate: BlockPredicate | None) -> list[int]:
        """Ids of the blocks that may hold a row matching ``predicate`` (conservative)."""

    @abc.abstractmethod
    def read_block(self, block: int, projection: list[str] | None = None) -> pa.RecordBatch:
        """One block, with the requested columns that the extent holds (all if None)."""

    def read_blocks(
        self, blocks: list[int], projection: list[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The given blocks in order, as ``read_block`` returns them; formats may batch reads."""
        for block in blocks:
            yield self.read_block(block, projection)

    def block_rows(self) -> list[int]:
        """Rows of each block, in order."""
        stats = self.metadata().block_stats
        if stats is not None:
            return [b.row_count for b in stats]
        count = self.metadata().block_count
        return [self.read_block(b, []).num_rows for b in range(count)]

    def shredded(self) -> list[Shred]:
        """The hidden typed sub-columns of dynamic paths (``_shred.py``); ``read_blocks``
        reads them by name. Empty in formats without shredding (tlm)."""
        return []

    def token_filters(self) -> dict[str, list[bytes | None]]:
        """Per text column, each block's token filter (``_token_bloom``; None: none);
        ``_token_filter.py`` prunes with them. Empty in formats without them (tlm)."""
        return {}

    def gram_filters(self) -> dict[str, list[list[bytes | None]]]:
        """Per text column, per block, each page's trigram filter (``_gram_bloom``; None:
        none); ``_gram_filter.py`` prunes with them. Empty in formats without them (tlm)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release file handles and mappings."""


class ExtentWriter(abc.ABC):
    @abc.abstractmethod
    def append(
        self, batch: pa.RecordBatch, parsed: Mapping[str, ParsedDynamic] | None = None
    ) -> None:
        """Add rows; the batch's schema must equal the writer's schema. ``parsed``: dynamic
        columns as Arrow parsed them, row-aligned with ``batch`` (``_parsed.py``): paths and
        shredded sub-columns of their exact rows come from it rather than decoded CBOR."""

    @abc.abstractmethod
    def finish(self, *, synced: bool = True) -> ExtentWriteResult:
        """Seal the extent and store it; it is an orphan until a commit references it.
        ``synced=False``: stored with ``ObjectStore.put_unsynced``, the caller syncs it."""

    @abc.abstractmethod
    def abort(self) -> None:
        """Drop everything written so far."""

    def __enter__(self) -> ExtentWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is not None:
            self.abort()


class SegmentFormat(abc.ABC):
    """Factory of extent readers and writers."""

    name: str
    """What the catalog records for the extents this format writes."""

    @abc.abstractmethod
    def open_extent(self, store: ObjectStore, object_path: str) -> ExtentReader: ...

    @abc.abstractmethod
    def start_extent(
        self, store: ObjectStore, schema: pa.Schema, path_prefix: str
    ) -> ExtentWriter: ...
