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
from datafusion import Expr, col, functions, lit

from kyma.engine.format import ExtentReader
from kyma.engine.format._shred import Shred, double_text
from kyma.engine.format.predicate import MAX_PATH_DEPTH, BlockStats, dynamic_path
from kyma.engine.query._path_columns import PathColumn
from kyma.engine.query.udfs import DOUBLE_TEXT, DYN_GET, dyn_get


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

    def source(self, path: PathColumn, blocks: list[int]) -> tuple[str, ...]:
        """Where ``path`` comes from in ``blocks``: its sub-columns' names, ``("absent",)`` or
        ``("cbor",)``. Extents alike in this read alike (one native scan)."""
        shreds = self.shredded.get(path.name)
        if shreds:
            return tuple(s.name for s in shreds)
        return ("absent",) if all(self.absent(b, path) for b in blocks) else ("cbor",)

    def expression(self, path: PathColumn, blocks: list[int]) -> Expr:
        """The path column of ``blocks`` as a DataFusion expression over the extent's
        columns: what ``fill`` computes block by block, for a native scan."""
        shreds = self.shredded.get(path.name)
        if shreds:
            texts = [_text_expr(s) for s in shreds]
            return texts[0] if len(texts) == 1 else functions.coalesce(*texts)
        if self.source(path, blocks) == ("absent",):
            return lit(None).cast(pa.string())
        return DYN_GET(col(quoted(path.column)), lit(json.dumps(list(path.path))))

    def _answer(self, block: int, path: PathColumn, batch: pa.RecordBatch) -> pa.Array:
        shreds = self.shredded.get(path.name)
        if shreds:
            texts = [_text(s.type, batch.column(s.name)) for s in shreds]
            return texts[0] if len(texts) == 1 else pc.coalesce(*texts)
        if self.absent(block, path):
            return pa.nulls(batch.num_rows, pa.string())
        return dyn_get(batch.column(path.column), pa.array([json.dumps(list(path.path))]))


def quoted(name: str) -> str:
    """A column name as DataFusion's ``col`` takes it verbatim (dots, slashes, quotes)."""
    return '"' + name.replace('"', '""') + '"'


def _text_expr(shred: Shred) -> Expr:
    column = col(quoted(shred.name))
    if shred.type == "double":
        return DOUBLE_TEXT(column)
    return column if shred.type == "string" else column.cast(pa.string())


def _text(kind: str, values: pa.Array) -> pa.Array:
    if kind == "double":
        return double_text(values)
    return values if kind == "string" else values.cast(pa.string())


def plan(reader: ExtentReader, paths: Sequence[PathColumn], blocks: list[int]) -> ExtentPaths:
    """Which columns ``reader`` must read to answer ``paths`` in ``blocks``."""
    stats = reader.metadata().block_stats if paths else None
    return plan_of(reader.shredded(), stats, paths, blocks)


def plan_of(
    shredded: Sequence[Shred],
    block_stats: list[BlockStats] | None,
    paths: Sequence[PathColumn],
    blocks: list[int],
) -> ExtentPaths:
    """``plan`` from an extent's sub-columns and block stats (a cached footer's)."""
    by_path: dict[str, list[Shred]] = {}
    for s in shredded:
        by_path.setdefault(PathColumn(s.column, s.path).name, []).append(s)
    out = ExtentPaths(by_path, block_stats, paths)
    for path in paths:
        shreds = by_path.get(path.name)
        if shreds:
            out.reads.extend(s.name for s in shreds)
        elif not all(out.absent(b, path) for b in blocks) and path.column not in out.reads:
            out.reads.append(path.column)
    return out
