"""Shredding: the scalar paths of an extent's dynamic values as typed hidden sub-columns.

Each distinct CBOR value of the extent is decoded and walked once (``_walk.py``); per path the
values are gathered by type (long, double, bool, string) into one Arrow array over the
distinct values, then spread to the rows of each block with ``take`` -- no per-row Python.
A path that holds an object, an array or anything else somewhere in the extent is not
shredded (its nested scalar paths are); the CBOR column always keeps the whole value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._parsed import Leaf
from kyma.engine.format._stats import holds_nul
from kyma.engine.format._walk import DistinctValues
from kyma.engine.format.predicate import ColStat, dynamic_path

SHRED_PATHS = 256
"""At most this many paths per dynamic column per extent are shredded, most frequent first."""
HIDDEN_PREFIX = "__kyma/"
"""Sub-column names start with this; user column names (dotted identifiers) cannot."""
TYPES: dict[str, pa.DataType] = {
    "long": pa.int64(),
    "double": pa.float64(),
    "bool": pa.bool_(),
    "string": pa.string(),
}
STRING_MINMAX_CAP = 256  # as ``_stats.py``: longer strings give no min/max
DISTINCT_SET_CAP = 1_000

Path = tuple[str, ...]


@dataclass(frozen=True)
class Shred:
    """One sub-column: the values of type ``type`` at ``path`` of dynamic ``column``."""

    column: str
    path: Path
    type: str

    @property
    def name(self) -> str:
        return sub_column_name(self.column, self.path, self.type)

    def to_json(self) -> list[Any]:
        return [self.column, list(self.path), self.type]

    @classmethod
    def from_json(cls, data: list[Any]) -> Shred:
        column, path, kind = data
        if kind not in TYPES or not all(isinstance(k, str) for k in path):
            raise ValueError(f"not a shredded sub-column: {data!r}")
        return cls(str(column), tuple(path), kind)


def sub_column_name(column: str, path: Path, kind: str) -> str:
    """``__kyma/attributes/http.status_code:long``"""
    return f"{HIDDEN_PREFIX}{dynamic_path(column, path)}:{kind}"


def is_hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIX)


@dataclass
class ShreddedColumn:
    """The sub-columns of one dynamic column of an extent."""

    shreds: list[Shred]
    columns: list[pa.ChunkedArray]
    """Per shred, its values over the extent's rows: one chunk per block."""

    def block(self, b: int) -> list[pa.Array]:
        """Block ``b``'s arrays, one per shred."""
        return [column.chunk(b) for column in self.columns]


def shred(
    column: str,
    distinct: DistinctValues,
    limit: int = SHRED_PATHS,
    parsed: list[Leaf] | None = None,
) -> ShreddedColumn:
    """The scalar paths of ``column``'s values, up to ``limit`` paths, as typed arrays; with
    ``parsed``, also the leaves (row-aligned over the extent) of the rows left out of
    ``distinct`` (``_parsed``)."""
    n = len(distinct.values)
    slots = distinct.slots
    counts = distinct.row_counts()
    found: dict[Path, dict[str | None, int]] = {}  # rows per path and type
    for (path, kind), (ids, _) in slots.items():
        found.setdefault(path, {})[kind] = int(counts[ids].sum())
    rows = {(leaf.path, leaf.kind): leaf.array for leaf in parsed or ()}
    for (path, kind), array in rows.items():
        kinds = found.setdefault(path, {})
        kinds[kind] = kinds.get(kind, 0) + len(array) - array.null_count
    # Postgres' jsonb (the catalog's column stats) cannot hold NUL: such paths stay unshredded.
    scalar: dict[Path, dict[str, int]] = {
        p: {kind: n for kind, n in kinds.items() if kind is not None}
        for p, kinds in found.items()
        if None not in kinds and not any("\x00" in key for key in p)
    }
    frequency = {p: sum(kinds.values()) for p, kinds in scalar.items()}
    chosen = sorted(scalar, key=lambda p: (-frequency[p], p))[:limit]
    shreds: list[Shred] = []
    columns: list[pa.ChunkedArray] = []
    sizes = [len(chunk) for chunk in distinct.encoded.chunks]
    indices = pa.chunked_array([chunk.indices for chunk in distinct.encoded.chunks], pa.int32())
    for path in sorted(chosen):
        for kind in sorted(scalar[path]):
            shreds.append(Shred(column, path, kind))
            slot = slots.get((path, kind))
            fast = rows.get((path, kind))
            if slot is None:  # only parsed rows hold it
                assert fast is not None
                columns.append(_per_block(fast, sizes))
                continue
            dense = _spread(n, slot[0], slot[1], TYPES[kind]).take(indices)
            if fast is not None:
                dense = pc.coalesce(_per_block(fast, sizes), dense)
            columns.append(_per_block(dense, sizes))
    return ShreddedColumn(shreds, columns)


def _per_block(values: pa.Array | pa.ChunkedArray, sizes: list[int]) -> pa.ChunkedArray:
    """``values`` as a chunked array of one chunk per block (``sizes``: their rows)."""
    if isinstance(values, pa.ChunkedArray) and [len(c) for c in values.chunks] == sizes:
        return values
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    starts = np.cumsum([0, *sizes])
    return pa.chunked_array(
        [values.slice(int(s), n) for s, n in zip(starts, sizes, strict=False)], values.type
    )


def _spread(n: int, ids: list[int], values: list[Any], dtype: pa.DataType) -> pa.Array:
    """An array of ``n`` with ``values`` at ``ids``, null elsewhere."""
    where = np.full(n, -1, np.int64)
    where[np.asarray(ids, np.int64)] = np.arange(len(ids))
    return pa.array(values, dtype).take(pa.array(where, mask=where < 0))


def _single_typed(shredded: ShreddedColumn) -> list[int]:
    """Indexes of the string or long sub-columns that alone serve their path."""
    kinds: dict[Path, list[int]] = {}
    for i, s in enumerate(shredded.shreds):
        kinds.setdefault(s.path, []).append(i)
    return [
        ids[0]
        for ids in kinds.values()
        if len(ids) == 1 and shredded.shreds[ids[0]].type in ("string", "long")
    ]


def sub_column_stats(shredded: ShreddedColumn, block: int, rows: int) -> dict[str, ColStat]:
    """Block stats of the paths one sub-column serves alone (string-only or long-only),
    keyed by the path's name: predicates on the path prune like on any column."""
    out: dict[str, ColStat] = {}
    for i in _single_typed(shredded):
        s, array = shredded.shreds[i], shredded.columns[i].chunk(block)
        nulls = array.null_count
        lo = hi = None
        if nulls < rows:
            mm = pc.min_max(array)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        kind = "Int64" if s.type == "long" else "Str"
        long_text = kind == "Str" and lo is not None
        if long_text and pc.max(pc.binary_length(array)).as_py() > STRING_MINMAX_CAP:
            lo = hi = None
        out[dynamic_path(s.column, s.path)] = ColStat(kind, nulls, lo, hi)
    return out


def path_column_stats(shredded: ShreddedColumn) -> dict[str, dict[str, Any]]:
    """Extent column stats of the same paths: the distinct answers (as text, what
    ``attributes['x'] = '...'`` compares), None past DISTINCT_SET_CAP; min and max of longs."""
    out: dict[str, dict[str, Any]] = {}
    for i in _single_typed(shredded):
        s, column = shredded.shreds[i], shredded.columns[i]
        # ids and the like: the first rows already hold too many distinct values
        head = column.slice(0, 2 * DISTINCT_SET_CAP)
        many = len(head) < len(column) and len(pc.unique(head).drop_null()) > DISTINCT_SET_CAP
        words = None if many else pc.unique(column).drop_null().cast(pa.string())
        fits = words is not None and len(words) <= DISTINCT_SET_CAP and not holds_nul(words)
        stat: dict[str, Any] = {
            "distinct": sorted(words.to_pylist()) if fits and words is not None else None,
            "tokens": None,
        }
        if s.type == "long" and column.null_count < len(column):
            mm = pc.min_max(column)
            stat["min"], stat["max"] = mm["min"].as_py(), mm["max"].as_py()
        out[dynamic_path(s.column, s.path)] = stat
    return out


def double_text(values: pa.Array) -> pa.Array:
    """Doubles as ``kyma_dyn_get`` words them (Python's JSON: ``1.0``, ``1e+20``, ``NaN``),
    computed once per distinct value."""
    distinct = pc.unique(values)
    words = [None if v is None else _json_float(v) for v in distinct.to_pylist()]
    return pa.array(words, pa.string()).take(pc.index_in(values, distinct))


def _json_float(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return float.__repr__(v)
