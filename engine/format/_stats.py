"""Statistics every extent writer computes: per-block stats and per-extent column stats.

Everything is vectorized with Arrow compute; only dynamic values are decoded one by one
(``_paths.py``), and only the distinct ones of each extent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._paths import PATH_SET_CAP
from kyma.engine.format.predicate import BlockStats, ColStat

STRING_MINMAX_CAP = 256
DISTINCT_SET_CAP = 1_000
TOKEN_SET_CAP = 10_000
RUN_ROWS = 131_072
"""Distinct and token sets are updated per run of blocks of about this many rows."""
PROBE_ROWS = 2 * TOKEN_SET_CAP
"""The first rows of a run, whose sets are built before the rest's."""


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
        """Distinct and token sets of the blocks since the last run, a few kernel calls per
        run of blocks rather than per block."""
        run, self._run, self._run_rows = self._run, [], 0
        if not run:
            return
        probe: dict[str, tuple[CappedSet, CappedSet | None, pa.ChunkedArray]] = {}
        rest: dict[str, tuple[CappedSet, CappedSet | None, pa.ChunkedArray]] = {}
        for name, seen in self._distinct.items():
            tokens = None if name in self._given else self._tokens.get(name)
            if not seen.known and not (tokens is not None and tokens.known):
                continue
            values = pa.chunked_array([b.column(name) for b in run]).drop_null()
            # The first rows alone first: a column whose sets overflow their caps there (ids,
            # keys) gives them up without the rest of the run being hashed and split. Sets
            # are unions, so the two parts add up to what the whole run gives.
            probe[name] = (seen, tokens, values.slice(0, PROBE_ROWS))
            if len(values) > PROBE_ROWS:
                rest[name] = (seen, tokens, values.slice(PROBE_ROWS))
        _add_values(probe)
        _add_values(rest)

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
            self._tokens[name].add(pc.unique(pa.chunked_array(words, words[0].type)))
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


def _add_values(columns: dict[str, tuple[CappedSet, CappedSet | None, pa.ChunkedArray]]) -> None:
    """Add each column's non-null values to its distinct set (seen) and, if it has one, its
    token set (the words of the values the distinct set had not held). Small columns are
    split into words together (``_tokens_of``): a split costs a few kernel calls whatever
    its size."""
    split: dict[str, pa.Array | pa.ChunkedArray] = {}
    for name, (seen, tokens, values) in columns.items():
        words = tokens is not None and tokens.known
        if not seen.known:
            if words:  # only the words: split the values as they are
                split[name] = values
            continue
        distinct = pc.unique(values)
        new = seen.add(distinct)
        if words:
            split[name] = distinct if new is None else new
    small = [name for name, values in split.items() if len(values) <= SMALL_SPLIT]
    found = dict(zip(small, _tokens_of([split[name] for name in small]), strict=True))
    for name, values in split.items():
        tokens = columns[name][1]
        assert tokens is not None
        tokens.add(found[name] if name in found else _tokens(values))


SMALL_SPLIT = 4_096
"""Columns of at most this many values to split are split together."""


def _tokens_of(columns: list[pa.Array | pa.ChunkedArray]) -> list[pa.Array]:
    """``_tokens`` of each of ``columns`` (strings, no nulls), split all at once: each
    piece and word knows its column by where its bytes lie, and is made distinct with it."""
    if len(columns) < 2:
        return [_tokens(c) for c in columns]
    chunks = [(i, c) for i, col in enumerate(columns) for c in _chunks(col)]
    joined = pa.concat_arrays([c.cast(pa.large_string()) for _, c in chunks])
    tags = np.repeat(
        np.array([i for i, _ in chunks], np.int64), np.array([len(c) for _, c in chunks], np.int64)
    )
    pieces = _pieces(joined)
    if not len(pieces):
        return [pa.array([], c.type) for c in columns]
    piece_tags = tags[_value_of(joined, _offsets(pieces)[:-1])]
    bare, bare_tags = _distinct(pc.utf8_ltrim(pc.ascii_lower(pieces), " "), piece_tags)
    word = pc.ascii_is_alnum(bare)
    kept = pc.and_(word, _longer_than_one(bare))
    words, tags = bare.filter(kept), bare_tags[_mask(kept)]
    rest = pc.invert(word)
    if pc.any(rest).as_py():
        rest_values, rest_tags = bare.filter(rest), bare_tags[_mask(rest)]
        split, starts = _words(rest_values, sources=True)
        longer = _longer_than_one(split)
        split_tags = rest_tags[_value_of(rest_values, starts)][_mask(longer)]
        words = pa.concat_arrays([words, split.filter(longer)])
        words, tags = _distinct(words, np.concatenate([tags, split_tags]))
    bounds = np.searchsorted(tags, np.arange(len(columns) + 1))
    return [
        words.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i])).cast(c.type)
        for i, c in enumerate(columns)
    ]


def _chunks(col: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return col.chunks if isinstance(col, pa.ChunkedArray) else [col]


def _mask(values: pa.Array) -> np.ndarray:
    return values.to_numpy(zero_copy_only=False)


def _offsets(values: pa.Array) -> np.ndarray:
    """A large string array's offsets, from 0."""
    offsets = np.frombuffer(values.buffers()[1], np.int64, len(values) + 1, values.offset * 8)
    return offsets - offsets[0]


def _value_of(values: pa.Array, at: np.ndarray) -> np.ndarray:
    """Which value of a large string array holds each byte position ``at`` (from its first
    value's first byte): the last value starting at or before it (empty ones hold none)."""
    return np.searchsorted(_offsets(values)[:-1], at, "right") - 1


def _distinct(values: pa.Array, tags: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The distinct (tag, value) pairs, ordered by tag."""
    encoded = pc.dictionary_encode(values)
    width = max(len(encoded.dictionary), 1)
    keys = tags * width + encoded.indices.to_numpy(zero_copy_only=False)
    keys = np.sort(pc.unique(pa.array(keys)).to_numpy())
    return encoded.dictionary.take(pa.array(keys % width)), keys // width


def _tokens(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Distinct words: the maximal runs of ASCII letters and digits of each value,
    lowercased, of two bytes or more (what splitting the ASCII-lowercased text on the regex
    ``[^a-z0-9]+`` gives). The text is cut at spaces first (``_pieces``: no copy), the
    pieces lowercased and trimmed of their space, and only the distinct ones that are not
    one ASCII word already are cut into words (``_words``: a few passes over their bytes)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    pieces = pa.chunked_array([_pieces(c) for c in chunks], col.type)
    bare = pc.unique(pc.utf8_ltrim(pc.ascii_lower(pieces), " "))
    word = pc.ascii_is_alnum(bare)
    words = bare.filter(pc.and_(word, _longer_than_one(bare)))
    rest = bare.filter(pc.invert(word))
    if not len(rest):
        return words  # distinct already
    split = _words(rest)
    split = split.filter(_longer_than_one(split))
    return pc.unique(pa.chunked_array([words, split], bare.type))


_TWO = {pa.int32(): pa.scalar(2, pa.int32()), pa.int64(): pa.scalar(2, pa.int64())}


def _longer_than_one(values: pa.Array) -> pa.Array:
    """Whether each value has two bytes or more (a typed scalar: a Python int costs a
    kernel call several times over)."""
    lengths = pc.binary_length(values)
    return pc.greater_equal(lengths, _TWO[lengths.type])


def _pieces(chunk: pa.Array) -> pa.Array:
    """A string array's bytes cut before every space and at every value's start, as a string
    array over the same data buffer (new offsets only, from 0). A piece never spans two
    values, and cuts fall on ASCII bytes only, so every piece is UTF-8 and holds at most one
    space, its first byte (the caller trims it). Null values must hold no bytes (the caller
    drops them)."""
    wide = pa.types.is_large_string(chunk.type)
    width = np.dtype(np.int64 if wide else np.int32)
    _, offsets_buffer, data_buffer = chunk.buffers()
    if data_buffer is None or len(chunk) == 0:
        return pa.array([], chunk.type)
    offsets = np.frombuffer(offsets_buffer, width, len(chunk) + 1, chunk.offset * width.itemsize)
    start, end = int(offsets[0]), int(offsets[-1])
    cut = np.frombuffer(data_buffer, np.uint8, end - start, start) == 0x20
    starts = offsets[:-1] - start
    cut[starts[starts < len(cut)]] = True
    bounds = np.append(np.flatnonzero(cut), end - start).astype(width)  # from 0: kernels
    data = data_buffer.slice(start, end - start)  # such as ascii_lower assume it
    return pa.Array.from_buffers(chunk.type, len(bounds) - 1, [None, pa.py_buffer(bounds), data])


_WORD_BYTES = bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("0"), ord("9") + 1))
_SEPARATORS = bytes(b for b in range(256) if b not in _WORD_BYTES.upper() + _WORD_BYTES)
_IS_WORD = bytes(int(b not in _SEPARATORS) for b in range(256))
_LOWER = bytes(range(256)).lower()


def _words(chunk: pa.Array, sources: bool = False) -> Any:
    """The runs of ASCII letters and digits of a string array's values, lowercased, as a
    new string array of the same type: the word bytes packed together by one translation,
    cut wherever a run starts (after another byte, or at a value's start). Non-ASCII bytes
    are separators, so every word is ASCII. Null values must hold no bytes. ``sources``:
    also where each word starts in the values' bytes (from the first value's start)."""
    wide = pa.types.is_large_string(chunk.type)
    width = np.dtype(np.int64 if wide else np.int32)
    _, offsets_buffer, data_buffer = chunk.buffers()
    if data_buffer is None or len(chunk) == 0:
        empty = pa.array([], chunk.type)
        return (empty, np.zeros(0, np.int64)) if sources else empty
    offsets = np.frombuffer(offsets_buffer, width, len(chunk) + 1, chunk.offset * width.itemsize)
    start, end = int(offsets[0]), int(offsets[-1])
    raw = data_buffer.slice(start, end - start).to_pybytes()
    at = np.flatnonzero(np.frombuffer(raw.translate(_IS_WORD), np.bool_))
    first = np.ones(len(at), np.bool_)
    first[1:] = at[1:] != at[:-1] + 1
    value_start = np.zeros(len(raw), np.bool_)
    starts = offsets[:-1] - start
    value_start[starts[starts < len(raw)]] = True
    first |= value_start[at]
    bounds = np.append(np.flatnonzero(first), len(at)).astype(width)
    text = raw.translate(_LOWER, _SEPARATORS)
    words = pa.Array.from_buffers(
        chunk.type, len(bounds) - 1, [None, pa.py_buffer(bounds), pa.py_buffer(text)]
    )
    return (words, at[bounds[:-1]]) if sources else words


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
        """The values in ascending order (None if unknown), sorted by Arrow: UTF-8 bytes
        sort as their code points do, so the order is Python's."""
        if not self.known:
            return None
        if self._held is None:
            return []
        return self._held.take(pc.sort_indices(self._held)).to_pylist()

    def add(self, values: pa.Array) -> pa.Array | None:
        """Add distinct ``values``; those not held before, or None if the set is unknown."""
        if not self.known:
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
