"""Statistics every extent writer computes: per-block stats and per-extent column stats.

Min/max and null counts are Arrow compute; distinct and token sets are compiled passes
over the values' bytes (``native.strings``) that stop once past their caps; only dynamic
values are decoded one by one (``_paths.py``), and only the distinct ones of each extent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._paths import PATH_SET_CAP
from kyma.engine.format.predicate import BlockStats, ColStat
from kyma.engine.native import strings

STRING_MINMAX_CAP = 256
DISTINCT_SET_CAP = 1_000
TOKEN_SET_CAP = 10_000
RUN_ROWS = 131_072
"""Distinct and token sets are updated per run of blocks of about this many rows."""


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_int32(t) or pa.types.is_int64(t)


def _is_str(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def is_dynamic(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def time_column(schema: pa.Schema) -> str | None:
    """The column whose values bound the extent in time: ``_timestamp``, else the first."""
    names = [f.name for f in schema if pa.types.is_timestamp(f.type)]
    return "_timestamp" if "_timestamp" in names else (names[0] if names else None)


def block_stats(batch: pa.RecordBatch) -> BlockStats:
    """Per-column stats of one block; dynamic columns' paths are None (unknown) until
    ``with_paths`` fills them in (``block_paths`` computes them for a whole extent at once)."""
    columns: dict[str, ColStat] = {}
    for field, col in zip(batch.schema, batch.columns, strict=True):
        stat = _column_stat(field.type, col)
        if stat is not None:
            columns[field.name] = stat
    return BlockStats(batch.num_rows, columns)


def with_paths(stats: BlockStats, paths: dict[str, frozenset[str] | None]) -> BlockStats:
    """``stats`` with the paths of its dynamic columns."""
    columns = {
        name: replace(stat, paths=paths[name]) if name in paths else stat
        for name, stat in stats.columns.items()
    }
    return BlockStats(stats.row_count, columns)


def _column_stat(dtype: pa.DataType, col: pa.Array) -> ColStat | None:
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
    if is_dynamic(dtype):
        return ColStat("Dyn", nulls)
    return None


def _min_max(col: pa.Array) -> tuple[Any, Any]:
    result = pc.min_max(col)
    return result["min"].as_py(), result["max"].as_py()


class ExtentStats:
    """Accumulates extent-level stats across blocks: distinct and token sets, paths, time."""

    def __init__(self, schema: pa.Schema) -> None:
        self._time_column = time_column(schema)
        self._distinct: dict[str, CappedSet] = {}
        self._tokens: dict[str, CappedSet] = {}
        self._paths: dict[str, set[str] | None] = {}
        for f in schema:
            if _is_int(f.type) or _is_str(f.type):
                self._distinct[f.name] = CappedSet(DISTINCT_SET_CAP)
            if _is_str(f.type):
                self._tokens[f.name] = CappedSet(TOKEN_SET_CAP)
            if is_dynamic(f.type):
                self._paths[f.name] = set()
        self.min_ts: int | None = None
        self.max_ts: int | None = None
        self._run: list[pa.RecordBatch] = []
        self._run_rows = 0
        self._given: dict[str, list[pa.Array]] = {}
        self._started = False

    def given_words(self, name: str, words: list[pa.Array]) -> None:
        """The words of every value of column ``name``, one array per block, found already
        (the Parquet writer's token filters): its token set is their union, and its values
        are not split again. Before the first ``update``."""
        assert not self._started and name in self._tokens
        self._given[name] = words

    def update(self, batch: pa.RecordBatch, stats: BlockStats) -> None:
        self._started = True
        if self._time_column is not None:
            stat = stats.columns[self._time_column]
            if stat.min is not None:
                self.min_ts = stat.min if self.min_ts is None else min(self.min_ts, stat.min)
                self.max_ts = stat.max if self.max_ts is None else max(self.max_ts, stat.max)
        self._run.append(batch)
        self._run_rows += batch.num_rows
        if self._run_rows >= RUN_ROWS:
            self._add_run()

    def _add_run(self) -> None:
        """Distinct and token sets of the blocks since the last run, one pass per set and
        run of blocks: a set past its cap (ids, keys) stops there."""
        run, self._run, self._run_rows = self._run, [], 0
        if not run:
            return
        for name, seen in self._distinct.items():
            tokens = None if name in self._given else self._tokens.get(name)
            values = pa.chunked_array([b.column(name) for b in run])
            new = seen.add(strings.distinct(values, seen.cap)) if seen.known else None
            if tokens is not None and tokens.known:  # the words of the values not held
                tokens.add(strings.words(values if new is None else new, tokens.cap))

    def add_paths(self, stats: BlockStats) -> None:
        """The dynamic paths of one block (``with_paths``' output)."""
        for name, seen in self._paths.items():
            stat = stats.columns[name]
            if seen is not None:
                self._paths[name] = None if stat.paths is None else _union(seen, stat.paths)

    def column_stats(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        self._add_run()
        for name, words in self._given.items():
            tokens = self._tokens[name]
            tokens.add(strings.distinct(pa.chunked_array(words, words[0].type), tokens.cap))
        self._given = {}
        for name, seen in self._distinct.items():
            tokens = self._tokens.get(name)
            out[name] = {
                "distinct": seen.sorted(),
                "tokens": None if tokens is None else tokens.sorted(),
            }
        return out

    def present_paths(self) -> list[str]:
        """Every dynamic path written; a bare column name means "any path" (past the cap)."""
        out: list[str] = []
        for name, paths in self._paths.items():
            out.extend([name] if paths is None else paths)
        return sorted(out)


class CappedSet:
    """Distinct values, given up (``known`` False) past ``cap``.

    Held as an Arrow array, never as Python objects until ``sorted``: values already held
    are filtered out with Arrow (``is_in``), and a block mostly repeats what earlier blocks
    held.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.known = True
        self._held: pa.Array | None = None

    def sorted(self) -> list[Any] | None:
        """The values in ascending order (None if unknown). Python's sort of the (capped)
        values it holds anyway: Arrow's ``sort_indices`` costs ~0.2 ms for 1 000 integers."""
        if not self.known:
            return None
        return [] if self._held is None else sorted(self._held.to_pylist())

    def add(self, values: pa.Array | None) -> pa.Array | None:
        """Add distinct ``values`` (None: more than the cap); those not held before, or None
        if the set is unknown."""
        if values is None or not self.known:
            self.known, self._held = False, None
            return None
        held = 0 if self._held is None else len(self._held)
        if self._held is not None:
            values = values.filter(pc.invert(pc.is_in(values, value_set=self._held)))
        if len(values) == 0:
            return values
        if held + len(values) > self.cap or holds_nul(values):
            # Postgres' jsonb cannot hold NUL: the set becomes "unknown"
            self.known, self._held = False, None
            return None
        self._held = values if self._held is None else pa.concat_arrays([self._held, values])
        return values


def holds_nul(values: pa.Array) -> bool:
    """Whether a string array holds a NUL character, by one scan of its bytes (a substring
    kernel is ~50 times slower)."""
    if not (_is_str(values.type) and len(values)):
        return False
    if values.null_count:  # a null's bytes are not its value
        return bool(pc.any(pc.match_substring(values, "\x00")).as_py())
    width = 8 if pa.types.is_large_string(values.type) else 4
    _, offsets_buffer, data = values.buffers()
    offsets = np.frombuffer(offsets_buffer, f"<i{width}", len(values) + 1, values.offset * width)
    start, end = int(offsets[0]), int(offsets[-1])
    return end > start and not np.frombuffer(data, np.uint8, end - start, start).all()


def _union(seen: set[str], more: frozenset[str]) -> set[str] | None:
    seen.update(more)
    return None if len(seen) > PATH_SET_CAP else seen
