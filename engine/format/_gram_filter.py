"""Stage 3 for substrings: pages whose trigram filters lack a searched text's trigrams.

``message LIKE '%zanzibar%'`` (a ``StringHolds`` block predicate, from ``like_literals``)
keeps only the pages, and so the row groups, whose filter for ``message`` may hold every
trigram of ``zanzibar`` (``_gram_bloom``; written by ``parquet/_grams.py``). A kept page
brings its time range, by which DataFusion's scan skips the other pages
(``query/_row_groups.py``). Conservative as every pruning visitor here: a page without a
filter, an extent without filters (written before them) and any predicate it cannot read
keep everything. Filters are read once per extent and kept, least recently used out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from kyma.engine.format import ExtentReader, SegmentFormat, _gram_bloom, _token_filter
from kyma.engine.format._token_filter import Cache
from kyma.engine.format.parquet._layout import GRAM_FILTERS_PREFIX
from kyma.engine.format.predicate import BlockPredicate, BlockStats, StringHolds
from kyma.engine.storage import ObjectStore

CACHE_BYTES = 64 << 20
"""Trigram filters kept in memory, all extents together."""

TIME = "_timestamp"
Range = tuple[int, int]
Pages = dict[str, list[list[bytes | None]]]
Filters = Mapping[str, bytes | None]


@dataclass(frozen=True)
class Kept:
    """What the trigram filters left of an extent's blocks."""

    blocks: list[int]
    spans: list[Range] | None = None
    """The kept pages' time ranges when pages were ruled out (a kept page without a filter:
    its block's range); None when none were, or a range is unknown."""
    pages: int = 0
    """Pages of the blocks searched."""
    pages_kept: int = 0


_FOLDS = frozenset("kisKIS")
"""ASCII letters a non-ASCII letter matches case-insensitively (the Kelvin sign, the long s,
dotted and dotless i): under ILIKE a run holding one may be other bytes in the text."""


def like_literals(pattern: str, *, insensitive: bool = False) -> list[str]:
    """The texts every value matching LIKE (``insensitive``: ILIKE) ``pattern`` holds: its
    runs of literal characters (``%`` and ``_`` end a run, a backslash escapes the next
    character, DataFusion's only escape) of three UTF-8 bytes or more. Under ILIKE a
    non-ASCII character, and an ASCII letter a non-ASCII one folds to, end a run too.

    >>> like_literals("%zanzibar%"), like_literals("%ab_cdef%"), like_literals(r"%50\\%\\_off%")
    (['zanzibar'], ['cdef'], ['50%_off'])
    >>> like_literals("%Straße%"), like_literals("%Straße%", insensitive=True)
    (['Straße'], ['tra'])
    >>> like_literals("%Disk full%", insensitive=True), like_literals("abc\\\\")
    ([' full'], [])
    """
    runs: list[str] = []
    run: list[str] = []
    escaped = False
    for char in pattern:
        literal = escaped or char not in "%_\\"
        if not literal and char == "\\":
            escaped = True
            continue
        escaped = False
        if literal and not (insensitive and (not char.isascii() or char in _FOLDS)):
            run.append(char)
            continue
        runs.append("".join(run))
        run = []
    if escaped:
        return []  # a trailing backslash: DataFusion refuses the pattern
    runs.append("".join(run))
    return [r for r in runs if len(r.encode()) >= 3]


def gram_evaluator(predicate: BlockPredicate | None) -> Callable[[Filters], bool]:
    """Whether a page (its filters) may hold a row matching ``predicate``."""
    probes: dict[str, Callable[[bytes], bool]] = {}

    def holds(p: BlockPredicate, filters: Filters) -> bool | None:
        if not isinstance(p, StringHolds):
            return None
        found = filters.get(p.column)
        if found is None:
            return True
        text = p.text
        return (probes.get(text) or probes.setdefault(text, _gram_bloom.probe([text])))(found)

    return _token_filter.evaluator(predicate, holds)


def searched(predicate: BlockPredicate | None) -> set[str]:
    """The columns whose trigrams ``predicate`` needs (through AND and OR only)."""
    return _token_filter.searched(predicate, StringHolds)


_cache: Cache[Pages] = Cache(
    CACHE_BYTES, lambda f: sum(len(p or b"") for b in f.values() for g in b for p in g)
)


def pruned(
    store: ObjectStore,
    fmt: SegmentFormat,
    object_path: str,
    file_columns: Collection[str],
    predicate: BlockPredicate | None,
    blocks: list[int],
    stats: Sequence[BlockStats] | None,
) -> Kept:
    """What the extent's trigram filters leave of ``blocks``; no I/O unless ``predicate``
    searches a column the extent has filters for."""
    wanted = searched(predicate)
    if not blocks or not any(GRAM_FILTERS_PREFIX + c in file_columns for c in wanted):
        return Kept(blocks)
    pages = _pages(store, fmt, object_path, None)
    return _kept(pages, predicate, wanted, blocks, stats)


def pruned_by(
    reader: ExtentReader,
    store: ObjectStore,
    object_path: str,
    predicate: BlockPredicate | None,
    blocks: list[int],
) -> Kept:
    """``pruned`` with the extent's reader open already."""
    wanted = searched(predicate)
    if not blocks or not wanted:
        return Kept(blocks)
    pages = _pages(store, None, object_path, reader)
    return _kept(pages, predicate, wanted, blocks, None)


def _pages(
    store: ObjectStore, fmt: SegmentFormat | None, object_path: str, reader: ExtentReader | None
) -> Pages:
    key = (store.url, object_path)
    found = _cache.get(key)
    if found is None:
        opened = reader or fmt.open_extent(store, object_path)  # type: ignore[union-attr]
        try:
            found = opened.gram_filters()
        finally:
            if reader is None:
                opened.close()
        _cache.put(key, found)
    return found


def _kept(
    pages: Pages,
    predicate: BlockPredicate | None,
    wanted: set[str],
    blocks: list[int],
    stats: Sequence[BlockStats] | None,
) -> Kept:
    keep = gram_evaluator(predicate)
    columns = [c for c in wanted if pages.get(c)]
    if not columns:
        return Kept(blocks)
    kept: list[int] = []
    spans: list[Range] | None = []
    total = left = 0
    for block in blocks:
        per_page = [pages[c][block] for c in columns]
        inside: list[Range] | None = []
        for filters in zip(*per_page, strict=True):
            total += 1
            if not keep(dict(zip(columns, filters, strict=True))):
                continue
            left += 1
            head = next((f for f in filters if f is not None), None)
            if head is None or inside is None:
                inside = None
            else:
                inside.append(_gram_bloom.span(head))
        if inside == []:
            continue
        kept.append(block)
        if inside is None:
            inside = _block_range(stats, block)
        spans = None if spans is None or inside is None else spans + inside
    return Kept(kept, spans if left < total else None, total, left)


def _block_range(stats: Sequence[BlockStats] | None, block: int) -> list[Range] | None:
    found = None if stats is None else stats[block].columns.get(TIME)
    if found is None or found.nulls or found.min is None or found.max is None:
        return None
    return [(int(found.min), int(found.max))]
