"""Statistics every extent writer computes: per-block stats and per-extent column stats.

Everything is vectorized with Arrow compute; only dynamic values are decoded one by one,
and only the distinct ones of each block.
"""

from __future__ import annotations

from typing import Any

import cbor2
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format.predicate import MAX_PATH_DEPTH, BlockStats, ColStat, dynamic_path

STRING_MINMAX_CAP = 256
DISTINCT_SET_CAP = 1_000
TOKEN_SET_CAP = 10_000
PATH_SET_CAP = 1_000
TOKEN_PATTERN = r"[^a-z0-9]+"


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_int32(t) or pa.types.is_int64(t)


def _is_str(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_dynamic(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def time_column(schema: pa.Schema) -> str | None:
    """The column whose values bound the extent in time: ``_timestamp``, else the first."""
    names = [f.name for f in schema if pa.types.is_timestamp(f.type)]
    return "_timestamp" if "_timestamp" in names else (names[0] if names else None)


PathMemo = dict[bytes, frozenset[tuple[str, ...]]]
"""Paths of CBOR values already decoded in this extent: repeated values decode once."""
PATH_MEMO_CAP = 65_536


def dynamic_paths(column: str, values: pa.Array, memo: PathMemo) -> set[str] | None:
    """Every path present in the CBOR values (None once past the cap)."""
    found: set[tuple[str, ...]] = set()
    for raw in pc.unique(values.drop_null()).to_pylist():
        paths = memo.get(raw)
        if paths is None:
            paths = _paths_of(cbor2.loads(raw))
            if len(memo) < PATH_MEMO_CAP:
                memo[raw] = paths
        found.update(paths)
        if len(found) > PATH_SET_CAP:
            return None
    if any("\x00" in key for path in found for key in path):
        return None  # Postgres' text[] cannot hold NUL: the paths become "unknown"
    return {dynamic_path(column, path) for path in found}


def _paths_of(value: object) -> frozenset[tuple[str, ...]]:
    if type(value) is not dict:
        return frozenset()
    out: set[tuple[str, ...]] = set()
    _walk(value, (), out)
    return frozenset(out)


def _walk(value: dict, prefix: tuple[str, ...], out: set[tuple[str, ...]]) -> None:
    for key, child in value.items():
        path = (*prefix, str(key))
        out.add(path)
        if type(child) is dict and len(path) < MAX_PATH_DEPTH:
            _walk(child, path, out)


def block_stats(batch: pa.RecordBatch, memos: dict[str, PathMemo] | None = None) -> BlockStats:
    """Per-column stats of one block; ``memos`` (per dynamic column) spans an extent."""
    memos = {} if memos is None else memos
    columns: dict[str, ColStat] = {}
    for field, col in zip(batch.schema, batch.columns, strict=True):
        memo = memos.setdefault(field.name, {}) if _is_dynamic(field.type) else None
        stat = _column_stat(field.name, field.type, col, memo)
        if stat is not None:
            columns[field.name] = stat
    return BlockStats(batch.num_rows, columns)


def _column_stat(name: str, dtype: pa.DataType, col: pa.Array, memo: PathMemo) -> ColStat | None:
    nulls = col.null_count
    if pa.types.is_timestamp(dtype):
        lo, hi = _min_max(col.cast(pa.int64()))
        return ColStat("Ts", nulls, lo, hi)
    if _is_int(dtype):
        lo, hi = _min_max(col)
        return ColStat("Int64", nulls, lo, hi)
    if _is_str(dtype):
        longest = pc.max(pc.binary_length(col)).as_py()
        if longest is not None and longest > STRING_MINMAX_CAP:
            return ColStat("Str", nulls)
        lo, hi = _min_max(col)
        return ColStat("Str", nulls, lo, hi)
    if _is_dynamic(dtype):
        paths = dynamic_paths(name, col, {} if memo is None else memo)
        return ColStat("Dyn", nulls, paths=None if paths is None else frozenset(paths))
    return None


def _min_max(col: pa.Array) -> tuple[Any, Any]:
    result = pc.min_max(col)
    return result["min"].as_py(), result["max"].as_py()


class ExtentStats:
    """Accumulates extent-level stats across blocks: distinct and token sets, paths, time."""

    def __init__(self, schema: pa.Schema) -> None:
        self._time_column = time_column(schema)
        self._distinct: dict[str, set[Any] | None] = {}
        self._tokens: dict[str, set[str] | None] = {}
        self._paths: dict[str, set[str] | None] = {}
        for f in schema:
            if _is_int(f.type) or _is_str(f.type):
                self._distinct[f.name] = set()
            if _is_str(f.type):
                self._tokens[f.name] = set()
            if _is_dynamic(f.type):
                self._paths[f.name] = set()
        self.min_ts: int | None = None
        self.max_ts: int | None = None

    def update(self, batch: pa.RecordBatch, stats: BlockStats) -> None:
        if self._time_column is not None:
            stat = stats.columns[self._time_column]
            if stat.min is not None:
                self.min_ts = stat.min if self.min_ts is None else min(self.min_ts, stat.min)
                self.max_ts = stat.max if self.max_ts is None else max(self.max_ts, stat.max)
        for name, seen in self._distinct.items():
            if seen is not None:
                values = pc.unique(batch.column(name).drop_null())
                self._distinct[name] = _capped_union(seen, values, DISTINCT_SET_CAP)
        for name, seen in self._tokens.items():
            if seen is not None:
                self._tokens[name] = _capped_union(seen, _tokens(batch.column(name)), TOKEN_SET_CAP)
        for name, seen in self._paths.items():
            stat = stats.columns[name]
            if seen is not None:
                self._paths[name] = None if stat.paths is None else _union(seen, stat.paths)

    def column_stats(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, seen in self._distinct.items():
            tokens = self._tokens.get(name)
            out[name] = {
                "distinct": None if seen is None else sorted(seen),
                "tokens": None if tokens is None else sorted(tokens),
            }
        return out

    def present_paths(self) -> list[str]:
        """Every dynamic path written; a bare column name means "any path" (past the cap)."""
        out: list[str] = []
        for name, paths in self._paths.items():
            out.extend([name] if paths is None else paths)
        return sorted(out)


def _tokens(col: pa.Array) -> pa.Array:
    words = pc.list_flatten(pc.split_pattern_regex(pc.ascii_lower(col.drop_null()), TOKEN_PATTERN))
    return pc.unique(words.filter(pc.greater_equal(pc.binary_length(words), 2)))


def _capped_union(seen: set[Any], values: pa.Array, cap: int) -> set[Any] | None:
    if len(values) > cap:
        return None
    if pa.types.is_string(values.type) and pc.any(pc.match_substring(values, "\x00")).as_py():
        return None  # Postgres' jsonb cannot hold NUL: the set becomes "unknown"
    seen.update(values.to_pylist())
    return None if len(seen) > cap else seen


def _union(seen: set[str], more: frozenset[str]) -> set[str] | None:
    seen.update(more)
    return None if len(seen) > PATH_SET_CAP else seen
