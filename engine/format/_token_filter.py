"""Stage 3 of the pruning cascade for text: blocks whose token filters lack a searched word.

``has_token(message, 'timeout')`` (a ``StringHas`` block predicate) keeps only the blocks
whose filter for ``message`` may hold ``timeout`` (``_token_bloom``; written by
``parquet/_tokens.py``). Conservative as every pruning visitor here: a block without a
filter, a column without filters and any predicate it cannot read keep the block. Filters
are read once per extent (extents are immutable) and kept, least recently used out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from typing import Generic, TypeVar

from kyma.engine.format import ExtentReader, SegmentFormat, _token_bloom
from kyma.engine.format.parquet._layout import TOKEN_FILTERS_PREFIX
from kyma.engine.format.predicate import And, BlockPredicate, Or, StringHas, StringHolds
from kyma.engine.storage import ObjectStore

CACHE_BYTES = 64 << 20
"""Token filters kept in memory, all extents together."""

T = TypeVar("T")
Filters = Mapping[str, bytes | None]
"""One block's filter per text column."""


def searched(
    predicate: BlockPredicate | None, leaf: type[StringHas] | type[StringHolds] = StringHas
) -> set[str]:
    """The columns whose filters ``predicate``'s ``leaf`` tests need (words for ``StringHas``,
    trigrams for ``StringHolds``), through AND and OR only."""
    match predicate:
        case And(children) | Or(children):
            return set().union(*(searched(c, leaf) for c in children))
    return {predicate.column} if isinstance(predicate, leaf) else set()


def evaluator(
    predicate: BlockPredicate | None, leaf: Callable[[BlockPredicate, Filters], bool | None]
) -> Callable[[Filters], bool]:
    """Whether a block or page (its filters) may hold a row matching ``predicate``: AND and
    OR walked, each other predicate answered by ``leaf`` (None: not its kind, so it may)."""

    def may_match(p: BlockPredicate | None, filters: Filters) -> bool:
        match p:
            case And(children):
                return all(may_match(c, filters) for c in children)
            case Or(children):
                return any(may_match(c, filters) for c in children)
        answer = leaf(p, filters) if p is not None else None
        return True if answer is None else answer

    return lambda filters: may_match(predicate, filters)


_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_FOLDS = frozenset("kis")
"""ASCII letters a non-ASCII letter matches case-insensitively (the Kelvin sign, the long s,
dotted and dotless i): under ILIKE a word holding one may be no word of the text."""


def like_words(pattern: str, *, insensitive: bool = False) -> list[str]:
    """The words every text matching LIKE (``insensitive``: ILIKE) ``pattern`` holds as
    tokens: runs of ASCII letters and digits (lowercased, two or more) that a literal
    character or the pattern's start or end bounds on both sides, never a wildcard.
    Backslash escapes the next character (DataFusion's only escape).

    >>> like_words("% timeout %"), like_words("%timeout%"), like_words("user u42:%")
    (['timeout'], [], ['user', 'u42'])
    >>> like_words("%[Error] disk_full%"), like_words(r"a\\%b %")
    (['error'], [])
    >>> like_words("% ERROR %", insensitive=True), like_words("% disk %", insensitive=True)
    (['error'], [])
    """
    pieces: list[str | None] = []  # a literal character, or None for a wildcard
    escaped = False
    for char in pattern:
        if escaped or char not in "%_\\":
            pieces.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            pieces.append(None)
    if escaped:
        return []  # a trailing backslash: DataFusion refuses the pattern
    out: list[str] = []
    run: list[str] = []
    bounded = True  # the pattern's start bounds the first run
    for piece in [*pieces, ""]:  # "" stands for the pattern's end
        lower = piece.lower() if piece is not None and piece.isascii() else piece
        if lower is not None and lower in _WORD and lower != "":
            run.append(lower)
            continue
        closes = piece is not None and (not insensitive or piece.isascii())
        word = "".join(run)
        folds = insensitive and bool(_FOLDS & set(word))
        if run and bounded and closes and len(word) >= 2 and not folds:
            out.append(word)
        run = []
        bounded = closes
    return out


def token_evaluator(predicate: BlockPredicate | None) -> Callable[[Filters], bool]:
    """Whether a block (its filters) may hold a row matching ``predicate``.

    >>> import pyarrow as pa
    >>> bits = _token_bloom.build(pa.array(["timeout", "cache"]))
    >>> keep = token_evaluator(StringHas("message", "refused"))
    >>> keep({"message": bits}), keep({"message": None}), keep({})
    (False, True, True)
    """

    def holds(p: BlockPredicate, filters: Filters) -> bool | None:
        if not isinstance(p, StringHas):
            return None
        found = filters.get(p.column)
        return found is None or _token_bloom.may_hold(found, p.token)

    return evaluator(predicate, holds)


class Cache(Generic[T]):
    """Filters per extent (keyed by store URL and object path), least recently used out
    past ``limit`` bytes as ``size`` counts them."""

    def __init__(self, limit: int, size: Callable[[T], int]) -> None:
        self.limit = limit
        self._size = size
        self._held: OrderedDict[tuple[str, str], T] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> T | None:
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], filters: T) -> None:
        size = self._size(filters)
        with self._lock:
            if key in self._held or size > self.limit:
                return
            self._held[key] = filters
            self._bytes += size
            while self._bytes > self.limit:
                _, gone = self._held.popitem(last=False)
                self._bytes -= self._size(gone)


_cache: Cache[dict[str, list[bytes | None]]] = Cache(
    CACHE_BYTES, lambda f: sum(len(x or b"") for blocks in f.values() for x in blocks)
)


def pruned(
    store: ObjectStore,
    fmt: SegmentFormat,
    object_path: str,
    file_columns: Collection[str],
    predicate: BlockPredicate | None,
    blocks: list[int],
) -> list[int]:
    """The ``blocks`` of the extent (whose file holds ``file_columns``) that its token
    filters do not rule out; no I/O unless ``predicate`` searches words of a column the
    extent has filters for."""
    wanted = searched(predicate)
    if not blocks or not any(TOKEN_FILTERS_PREFIX + c in file_columns for c in wanted):
        return blocks
    key = (store.url, object_path)
    filters = _cache.get(key)
    if filters is None:
        reader = fmt.open_extent(store, object_path)
        try:
            filters = reader.token_filters()
        finally:
            reader.close()
        _cache.put(key, filters)
    return _kept(filters, predicate, blocks)


def pruned_by(
    reader: ExtentReader,
    store: ObjectStore,
    object_path: str,
    predicate: BlockPredicate | None,
    blocks: list[int],
) -> list[int]:
    """``pruned`` with the extent's reader open already."""
    if not blocks or not searched(predicate):
        return blocks
    key = (store.url, object_path)
    filters = _cache.get(key)
    if filters is None:
        filters = reader.token_filters()
        _cache.put(key, filters)
    return _kept(filters, predicate, blocks)


def _kept(
    filters: dict[str, list[bytes | None]], predicate: BlockPredicate | None, blocks: list[int]
) -> list[int]:
    wanted = searched(predicate)
    keep = token_evaluator(predicate)
    return [b for b in blocks if keep({c: f[b] for c, f in filters.items() if c in wanted})]
