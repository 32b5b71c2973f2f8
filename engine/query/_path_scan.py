"""The scan side of path columns: per extent, where each path's answer comes from.

- the extent shredded the path: its typed sub-columns, turned into text with Arrow kernels
  (strings as they are, longs in decimal, bools as true/false, doubles as Python's JSON
  words them) -- exactly what ``kyma_dyn_get`` answers;
- a block's stats prove the path absent: NULL, nothing read;
- otherwise (tlm extents, foreign Parquet, paths past the shredding bound, objects and
  arrays): ``kyma_dyn_get``'s own lookup over the block's CBOR column.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format import ExtentReader
from kyma.engine.format._shred import Shred, double_text
from kyma.engine.format.predicate import MAX_PATH_DEPTH, BlockStats, dynamic_path
from kyma.engine.query._path_columns import PathColumn
from kyma.engine.query.udfs import dyn_get


@dataclass
class ExtentPaths:
    """How one extent answers the scan's path columns."""

    shredded: dict[str, list[Shred]]  # path column name -> its sub-columns
    block_stats: list[BlockStats] | None
    paths: Sequence[PathColumn]
    reads: list[str] = field(default_factory=list)  # columns read for the paths

    def absent(self, block: int, path: PathColumn) -> bool:
        if self.block_stats is None or len(path.path) > MAX_PATH_DEPTH:
            return False
        stat = self.block_stats[block].columns.get(path.column)
        if stat is None or stat.kind != "Dyn" or stat.paths is None:
            return False
        return dynamic_path(path.column, path.path) not in stat.paths

    def fill(self, block: int, batch: pa.RecordBatch) -> pa.RecordBatch:
        """``batch`` with the path columns appended (read-only helper columns stay; the
        scan's ``conform`` drops them)."""
        columns, names = list(batch.columns), list(batch.schema.names)
        for path in self.paths:
            columns.append(self._answer(block, path, batch))
            names.append(path.name)
        return pa.RecordBatch.from_arrays(columns, names=names)

    def _answer(self, block: int, path: PathColumn, batch: pa.RecordBatch) -> pa.Array:
        shreds = self.shredded.get(path.name)
        if shreds:
            texts = [_text(s.type, batch.column(s.name)) for s in shreds]
            return texts[0] if len(texts) == 1 else pc.coalesce(*texts)
        if self.absent(block, path):
            return pa.nulls(batch.num_rows, pa.string())
        return dyn_get(batch.column(path.column), pa.array([json.dumps(list(path.path))]))


def _text(kind: str, values: pa.Array) -> pa.Array:
    if kind == "double":
        return double_text(values)
    return values if kind == "string" else values.cast(pa.string())


def plan(reader: ExtentReader, paths: Sequence[PathColumn], blocks: list[int]) -> ExtentPaths:
    """Which columns ``reader`` must read to answer ``paths`` in ``blocks``."""
    by_path: dict[str, list[Shred]] = {}
    for s in reader.shredded():
        by_path.setdefault(PathColumn(s.column, s.path).name, []).append(s)
    out = ExtentPaths(by_path, reader.metadata().block_stats if paths else None, paths)
    for path in paths:
        shreds = by_path.get(path.name)
        if shreds:
            out.reads.extend(s.name for s in shreds)
        elif not all(out.absent(b, path) for b in blocks) and path.column not in out.reads:
            out.reads.append(path.column)
    return out
