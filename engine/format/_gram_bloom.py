"""Trigram bloom filters: which three-byte runs a page of text may hold, for substring search.

A text column's block (row group) is cut into pages of ROWS rows (the writer's page size);
each page gets a filter of the distinct byte trigrams of its ASCII-lowercased values (a
trigram never spans two values) and the range of its rows' ``_timestamp``, so that a search
prunes pages, not only row groups. The writer's hashing is one compiled pass over the
block's bytes (``native.strings.gram_filters``), the reader's numpy (``probe``). A filter
is 16 bytes (the page's least and greatest time, int64 little endian) and then
``BITS_PER_GRAM`` bits per distinct trigram; ``may_hold`` answers False only when a trigram
of the searched text was never added.

>>> pages = build(pa.array(["Disk full on node-7", "timeout"]), pa.array([5, 9]))
>>> bits = pages[0].as_py()
>>> span(bits), may_hold(bits, ["disk", "node-7"]), may_hold(bits, ["zanzibar"])
((5, 9), True, False)
>>> pages[1].as_py() is None
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.native import strings

ROWS = 8_192
"""Rows a filter covers: the writer's page size (``parquet/_layout.PAGE_ROWS``)."""
BITS_PER_GRAM = 5
HASHES = 3
"""About 9 % false positives a trigram; a word of n letters needs all n - 2 of its own."""
MAX_BYTES = 1 << 16
"""A page with more distinct trigrams than fit here gets no filter (it is always read)."""
HEAD = 16

_ODD = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def grams(text: str) -> list[int]:
    """The trigrams of ``text``'s UTF-8 bytes (ASCII-lowercased), as 24-bit numbers.

    >>> grams("ABcd"), grams("ab")
    ([6513249, 6579042], [])
    """
    data = np.frombuffer(_ascii_lower(text).encode(), np.uint8).astype(np.uint32)
    return [int(g) for g in _windows(data)]


def _ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def _windows(data: np.ndarray) -> np.ndarray:
    if len(data) < 3:
        return np.zeros(0, np.uint32)
    return data[:-2] | (data[1:-1] << 8) | (data[2:] << 16)


def _positions(values: np.ndarray, bits: int) -> np.ndarray:
    """The HASHES bit positions of each trigram in a filter of ``bits`` bits (a power of
    two): the top bits of its product with an odd constant per hash (multiply-shift)."""
    shift = np.uint64(64 - (bits.bit_length() - 1))
    wide = values.astype(np.uint64)
    return (
        np.stack([(wide * c) >> shift for c in _ODD]).astype(np.int64)
        if bits > 1
        else (np.zeros((HASHES, len(values)), np.int64))
    )


def build(values: pa.Array, times: pa.Array | None) -> pa.Array:
    """The hidden column of one block: at the first row of each page of ROWS rows, its
    filter; null elsewhere, and where a page has no filter (too many trigrams, or a time
    that is null or unknown: ``times`` None). Null values' bytes count as text (more
    trigrams only keep more pages)."""
    multipliers = [int(m) for m in _ODD]
    pages = strings.gram_filters(values, ROWS, multipliers, BITS_PER_GRAM, MAX_BYTES * 8)
    out: list[bytes | None] = []
    for page, bits in zip(range(0, len(values), ROWS), pages, strict=True):
        head = _head(times, page, min(page + ROWS, len(values)))
        out.append(None if head is None or bits is None else head + bits)
    heads = pa.array(out, pa.binary())
    starts = np.arange(0, len(values), ROWS)
    slots = np.full(len(values), -1, np.int64)
    slots[starts] = np.arange(len(starts))
    return heads.take(pa.array(slots, mask=slots < 0))


def _head(times: pa.Array | None, first: int, last: int) -> bytes | None:
    if times is None:
        return None
    page = times.slice(first, last - first)
    if page.null_count:
        return None
    bounds = pc.min_max(page.cast(pa.int64()))
    return np.array([bounds["min"].as_py(), bounds["max"].as_py()], "<i8").tobytes()


def span(filter_bytes: bytes) -> tuple[int, int]:
    """The least and greatest time of the page whose filter is ``filter_bytes``."""
    low, high = np.frombuffer(filter_bytes[:HEAD], "<i8")
    return int(low), int(high)


def may_hold(filter_bytes: bytes, texts: list[str]) -> bool:
    """Whether the page may hold a value holding each of ``texts`` (ASCII case ignored)."""
    return probe(texts)(filter_bytes)


def probe(texts: list[str]) -> Callable[[bytes], bool]:
    """``may_hold`` for ``texts``, their bit positions worked out once per filter size."""
    found = np.array(sorted({g for t in texts for g in grams(t)}), np.uint32)
    by_size: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def holds(filter_bytes: bytes) -> bool:
        if not len(found):
            return True
        bits = (len(filter_bytes) - HEAD) * 8
        if bits <= 0:
            return False
        where = by_size.get(bits)
        if where is None:
            positions = _positions(found, bits).ravel()
            where = by_size[bits] = (positions >> 3, (positions & 7).astype(np.uint8))
        data = np.frombuffer(filter_bytes, np.uint8, offset=HEAD)
        return bool(((data[where[0]] >> where[1]) & 1).all())

    return holds
