"""What every extent writer shares: cutting appends into blocks, statistics, staging, storing.

A format subclasses ``BlockedWriter`` and says how a block is written (``_write_block``)
and how the staged file is sealed (``_seal``); the rest is here. A block's statistics are
computed after ``_write_block`` returns, so a format that encodes on another thread overlaps
the two; held blocks' statistics run on a thread of their own while the paths are found.
"""

from __future__ import annotations

import abc
import tempfile
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.errors import SchemaError
from kyma.engine.format import ExtentWriter, ExtentWriteResult
from kyma.engine.format._parsed import Leaf, ParsedDynamic, block_leaf_paths, concat, leaves
from kyma.engine.format._paths import block_paths
from kyma.engine.format._shred import (
    ShreddedColumn,
    path_column_stats,
    shred,
    sub_column_stats,
)
from kyma.engine.format._stats import ExtentStats, block_stats, is_dynamic, with_paths
from kyma.engine.format._walk import DistinctValues
from kyma.engine.format.predicate import BlockStats
from kyma.engine.storage import ObjectStore

BLOCK_BYTES = 64 << 20
"""A block ends at ``block_rows`` rows or at this many bytes of Arrow data, if sooner."""
OVERLAP_BYTES = 8 << 20
"""Held blocks of fewer bytes of Arrow data are written on the calling thread alone: for a
small extent (an OTLP group commit's) a thread's start and hand-offs cost more than the
overlap saves."""


class BlockedWriter(ExtentWriter):
    format_name: str
    """The format's name, also the suffix of its objects (``tables/7/<uuid>.parquet``)."""
    shred_paths = 0
    """How many paths per dynamic column the format stores as typed sub-columns
    (``_shred.py``); 0: none."""
    hold_blocks = False
    """Whether blocks are held until the extent is sealed (a format whose file schema holds
    the shredded sub-columns, known only then): they are written, and their statistics
    computed, after the paths are found."""
    residual = False
    """Whether the format stores dynamic columns stripped of their shredded leaves
    (``_residual.py``) and encodes the CBOR of parsed rows it stores whole itself; other
    formats get each batch's parsed rows encoded as it is appended."""

    def __init__(
        self, store: ObjectStore, schema: pa.Schema, path_prefix: str, block_rows: int
    ) -> None:
        self._store = store
        self._schema = schema
        self._block_rows = block_rows
        self.extent_id = str(uuid.uuid4())
        self.object_path = f"{path_prefix.rstrip('/')}/{self.extent_id}.{self.format_name}"
        scratch = store.scratch_dir() or Path(tempfile.gettempdir())
        self._staging = scratch / f"{self.extent_id}.part"
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._stats: list[BlockStats] = []
        self._blocks: list[dict[str, Any]] = []  # the final block stats, as JSON
        self._extent_stats = ExtentStats(schema)
        self._dynamic: dict[str, list[pa.Array]] = {
            f.name: [] for f in schema if is_dynamic(f.type)
        }
        self._parsed: dict[str, list[ParsedDynamic]] = {name: [] for name in self._dynamic}
        self._rows = 0
        self._appended = 0
        """Rows appended so far; a dynamic column's parsed pieces cover them all or none."""
        self._shredded: dict[str, ShreddedColumn] = {}
        self._held: list[pa.RecordBatch] = []
        self._column_stats_found: dict[str, dict[str, Any]] | None = None
        self._walked: dict[str, tuple[DistinctValues, list[Leaf] | None, list[int]]] = {}

    @abc.abstractmethod
    def _write_block(self, batch: pa.RecordBatch) -> None:
        """Write one block to the staging file (and its shredded sub-columns: ``_shredded``)."""

    @abc.abstractmethod
    def _seal(self) -> None:
        """Write the footer (block stats: ``self._blocks``) and close the staging file."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Close the staging file without sealing it (abort)."""

    def append(
        self, batch: pa.RecordBatch, parsed: Mapping[str, ParsedDynamic] | None = None
    ) -> None:
        if not batch.schema.equals(self._schema):
            raise SchemaError(
                f"batch schema does not match the extent's:\n{batch.schema}\nexpected:\n"
                f"{self._schema}"
            )
        if batch.num_rows == 0:
            return
        for name, pieces in self._parsed.items():
            piece = None if parsed is None else parsed.get(name)
            if piece is not None and pieces and piece.values.type != pieces[0].values.type:
                batch = _filled(batch, name, piece)  # one type per extent: these are CBOR
                piece = ParsedDynamic.none(batch.num_rows, pieces[0].values.type)
            elif piece is None and pieces:
                piece = ParsedDynamic.none(batch.num_rows, pieces[0].values.type)
            if piece is None:
                continue
            if not pieces and self._appended:
                pieces.append(ParsedDynamic.none(self._appended, piece.values.type))
            if not self._encodes_parsed:
                batch = _filled(batch, name, piece)
            pieces.append(piece)
        self._appended += batch.num_rows
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        self._pending_bytes += batch.nbytes
        while self._pending_rows >= self._block_rows or (
            self._pending_rows > 1 and self._pending_bytes >= BLOCK_BYTES
        ):
            self._flush(self._next_block_rows())

    @property
    def _encodes_parsed(self) -> bool:
        """Whether the format encodes the CBOR of parsed rows itself (``residual``)."""
        return self.residual and self.shred_paths > 0

    def _next_block_rows(self) -> int:
        """Rows of the next block: ``block_rows``, fewer when they would pass BLOCK_BYTES
        (at the pending rows' average width)."""
        fit = self._pending_rows * BLOCK_BYTES // max(self._pending_bytes, 1)
        return max(1, min(self._block_rows, self._pending_rows, fit))

    def _flush(self, rows: int) -> None:
        table = pa.Table.from_batches(self._pending, self._schema)
        block = table.slice(0, rows).to_batches()
        if len(block) > 1:  # the block spans appended batches: one copy joins them
            block = table.slice(0, rows).combine_chunks().to_batches()
        rest = table.slice(rows)
        self._pending = rest.to_batches()
        self._pending_rows = rest.num_rows
        self._pending_bytes = rest.nbytes
        (batch,) = block or [pa.RecordBatch.from_pylist([], self._schema)]
        for name, blocks in self._dynamic.items():
            blocks.append(batch.column(name))
        self._rows += batch.num_rows
        if self.hold_blocks:
            self._held.append(batch)
        else:
            self._write_and_count(batch)

    def _write_and_count(self, batch: pa.RecordBatch) -> None:
        """Write one block, then its statistics (the format may still be encoding it)."""
        self._write_block(batch)
        self._count(batch)

    def _count_all(self, batches: list[pa.RecordBatch]) -> None:
        for batch in batches:
            self._count(batch)

    def _count(self, batch: pa.RecordBatch) -> None:
        stats = block_stats(batch)
        self._extent_stats.update(batch, stats)
        self._stats.append(stats)

    def _write_blocks(self, batches: list[pa.RecordBatch]) -> None:
        """Write blocks in order; a format may hand them all to its encoder at once."""
        for batch in batches:
            self._write_block(batch)

    def _prepare_blocks(self, batches: list[pa.RecordBatch]) -> None:  # noqa: B027 - optional
        """What a format derives from the held blocks before writing them (on the stats
        thread, while the dynamic values are walked): Parquet's token filters."""

    def _write_held(self) -> dict[str, list[frozenset[str] | None]]:
        """Write the held blocks; return the extent's dynamic paths. The statistics run on a
        second thread (Arrow kernels, which release the GIL) while this one walks the dynamic
        values (Python) and hands the blocks to the format (which may encode on a third);
        the blocks' paths come last, while the format encodes. Small extents: all here."""
        held, self._held = self._held, []
        if sum(batch.nbytes for batch in held) < OVERLAP_BYTES:
            self._prepare_blocks(held)
            self._count_all(held)
            self._walk_dynamic(held)
            self._write_blocks(held)
            return self._block_paths()
        with ThreadPoolExecutor(1, thread_name_prefix="kyma-stats") as pool:
            prepared = pool.submit(self._prepare_blocks, held)
            counted = pool.submit(self._count_all, held)
            self._walk_dynamic(held)
            prepared.result()
            self._write_blocks(held)
            paths = self._block_paths()
            counted.result()
        return paths

    def _walk_dynamic(self, held: list[pa.RecordBatch]) -> None:
        """Each dynamic column's distinct values decoded and walked once (only of the rows
        Arrow's parse does not vouch for), and its shredded sub-columns if the format has
        them: a format whose schema holds them needs them before its first block.
        ``held``: the held blocks, whose parsed rows are encoded here if they must be
        decoded after all (a type ``leaves`` does not know)."""
        for name, blocks in self._dynamic.items():
            if not blocks:
                continue
            found = None
            whole = concat(self._parsed[name], self._rows)
            if whole is not None and (found := leaves(whole)) is not None:
                blocks = _without_exact(blocks, whole.exact)
            elif whole is not None and held:
                blocks = self._fill_held(name, whole, held)
            distinct = DistinctValues(blocks, leaves=self.shred_paths > 0)
            self._walked[name] = (distinct, found, [len(b) for b in blocks])
            if self.shred_paths:
                self._shredded[name] = shred(name, distinct, self.shred_paths, found)

    def _fill_held(
        self, name: str, whole: ParsedDynamic, held: list[pa.RecordBatch]
    ) -> list[pa.Array]:
        """The held blocks with the parsed rows of ``name`` encoded as CBOR (in place), and
        its blocks then: the column has no parsed rows any more."""
        start = 0
        for i, batch in enumerate(held):
            held[i] = _filled(batch, name, whole.slice(start, batch.num_rows))
            self._dynamic[name][i] = held[i].column(name)
            start += batch.num_rows
        self._parsed[name] = []
        return self._dynamic[name]

    def _parsed_whole(self, name: str) -> ParsedDynamic | None:
        """Dynamic column ``name`` as Arrow parsed it, over the extent's rows (None: its
        CBOR is all in the blocks)."""
        return concat(self._parsed[name], self._rows)

    def _block_paths(self) -> dict[str, list[frozenset[str] | None]]:
        """Dynamic paths of every block, from the walk (``_walk_dynamic``)."""
        paths: dict[str, list[frozenset[str] | None]] = {name: [] for name in self._dynamic}
        for name, (distinct, found, sizes) in self._walked.items():
            per_block = None
            if found is not None:
                starts = np.cumsum([0, *sizes])
                bounds = [(int(s), n) for s, n in zip(starts, sizes, strict=False)]
                per_block = block_leaf_paths(found, bounds)
            paths[name] = block_paths(name, distinct, per_block)
        return paths

    def _finish_stats(self, paths: dict[str, list[frozenset[str] | None]]) -> None:
        """Each block's statistics with its dynamic paths and shredded sub-columns."""
        for i, partial in enumerate(self._stats):
            stats = with_paths(partial, {name: found[i] for name, found in paths.items()})
            for shredded in self._shredded.values():
                stats.columns.update(sub_column_stats(shredded, i, stats.row_count))
            self._extent_stats.add_paths(stats)
            self._blocks.append(stats.to_json())

    def _column_stats(self) -> dict[str, dict[str, Any]]:
        """Column stats of the extent, and of its single-typed shredded paths by path name
        (computed once: the footer and the catalog both want them)."""
        if self._column_stats_found is None:
            out = self._extent_stats.column_stats()
            for shredded in self._shredded.values():
                out.update(path_column_stats(shredded))
            self._column_stats_found = out
        return self._column_stats_found

    def finish(self, *, synced: bool = True) -> ExtentWriteResult:
        if self._pending_rows:
            self._flush(self._pending_rows)
        if self.hold_blocks:
            paths = self._write_held()
        else:
            self._walk_dynamic([])
            paths = self._block_paths()
        self._finish_stats(paths)
        self._seal()
        byte_size = self._staging.stat().st_size
        if synced:
            self._store.put_file(self.object_path, self._staging)
        else:
            self._store.put_unsynced(self.object_path, self._staging)
        stats = self._extent_stats
        return ExtentWriteResult(
            extent_id=self.extent_id,
            object_path=self.object_path,
            byte_size=byte_size,
            row_count=self._rows,
            block_count=len(self._blocks),
            min_timestamp_nanos=stats.min_ts,
            max_timestamp_nanos=stats.max_ts,
            present_paths=stats.present_paths(),
            column_stats=self._column_stats(),
            format=self.format_name,
        )

    def abort(self) -> None:
        self._close()
        self._staging.unlink(missing_ok=True)


def _filled(batch: pa.RecordBatch, name: str, parsed: ParsedDynamic) -> pa.RecordBatch:
    """``batch`` with the parsed rows of dynamic column ``name`` encoded as CBOR."""
    index = batch.schema.get_field_index(name)
    column = parsed.filled(batch.column(index))
    return batch.set_column(index, batch.schema.field(index), column)


def _without_exact(blocks: list[pa.Array], exact: pa.Array) -> list[pa.Array]:
    """The blocks with the rows Arrow's parse vouches for set null: only the others are
    decoded."""
    out, start = [], 0
    for block in blocks:
        mask = exact.slice(start, len(block))
        out.append(pc.if_else(mask, pa.scalar(None, block.type), block))
        start += len(block)
    return out
