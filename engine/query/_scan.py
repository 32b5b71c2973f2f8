"""Stages 2 and 3 of the pruning cascade: block stats in each surviving extent's footer,
then a projected read of the surviving blocks.

Parquet extents decode only the projected column chunks of the surviving row groups, a few
row groups at a time; blocks of uncompressed tlm extents are zero-copy views into
memory-mapped files. Either way a scan holds a bounded amount of memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from kyma.engine import deletes
from kyma.engine.catalog import ExtentRef
from kyma.engine.format import SegmentFormat, _gram_filter, _token_filter
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.query import _path_scan
from kyma.engine.query._path_columns import PathColumn
from kyma.engine.storage import ObjectStore


@dataclass
class ScanStats:
    extents_total: int = 0
    extents_after_catalog: int = 0
    blocks_total: int = 0
    blocks_after_stats: int = 0
    blocks_after_tokens: int = 0
    """Blocks left by stage 3's token and trigram filters (``_token_filter.py``,
    ``_gram_filter.py``): the blocks read."""
    pages_searched: int = 0
    """Pages of those blocks whose trigram filters a substring search probed."""
    pages_after_grams: int = 0
    """Pages of them the trigram filters kept; the scan reads the others' rows not."""
    bytes_read: int = 0
    rows_scanned: int = 0

    def add(self, other: ScanStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class TableScan:
    """What one table reference needs: columns (None: all) and a predicate to prune with.

    ``schema`` ends with the text columns of ``paths`` (``_path_columns.py``), then, with
    ``rows``, ``deletes.ROW_COLUMNS`` (where each row is: what a DELETE deletes)."""

    schema: pa.Schema
    predicate: BlockPredicate | None
    stats: ScanStats = field(default_factory=ScanStats)
    paths: list[PathColumn] = field(default_factory=list)
    rows: bool = False


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``schema``'s columns; columns added after it was written are null."""
    if batch.schema.equals(schema, check_metadata=True):
        return batch
    names = batch.schema.names
    columns = [
        batch.column(f.name) if f.name in names else pa.nulls(batch.num_rows, f.type)
        for f in schema
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)  # zero-copy for present columns


def scan_blocks(
    scan: TableScan, extents: list[ExtentRef], store: ObjectStore, fmt: SegmentFormat
) -> Iterator[pa.RecordBatch]:
    """Yield the surviving blocks of ``extents``, projected to ``scan.schema``, without the
    rows their deletion vectors mark."""
    virtual = {p.name for p in scan.paths} | set(deletes.ROW_COLUMNS)
    names = [n for n in scan.schema.names if n not in virtual]
    for entry in extents:
        reader = fmt.open_extent(store, entry.object_path)
        try:
            blocks = reader.pruned_blocks(scan.predicate)
            scan.stats.blocks_total += entry.block_count
            scan.stats.blocks_after_stats += len(blocks)
            blocks = _token_filter.pruned_by(
                reader, store, entry.object_path, scan.predicate, blocks
            )
            fine = _gram_filter.pruned_by(reader, store, entry.object_path, scan.predicate, blocks)
            blocks = fine.blocks
            scan.stats.pages_searched += fine.pages
            scan.stats.pages_after_grams += fine.pages_kept
            scan.stats.blocks_after_tokens += len(blocks)
            paths = _path_scan.plan(reader, scan.paths, blocks)
            reads = names + [c for c in paths.reads if c not in names]
            deleted = deletes.positions(entry.deletes)
            starts = None
            if deleted is not None or scan.rows:
                starts = deletes.block_starts(reader.block_rows())
            for block, batch in zip(blocks, reader.read_blocks(blocks, reads), strict=True):
                scan.stats.bytes_read += batch.nbytes
                batch = paths.fill(block, batch) if scan.paths else batch
                if starts is not None and scan.rows:
                    batch = deletes.with_rows(batch, deleted, starts[block], entry.extent_id)
                elif starts is not None:
                    batch = deletes.keep(batch, deleted, starts[block])
                scan.stats.rows_scanned += batch.num_rows
                yield conform(batch, scan.schema)
        finally:
            reader.close()
