"""Trigram bloom filters: which three-byte runs a page of text may hold, for substring search.

A text column's block (row group) is cut into pages of ROWS rows (the writer's page size);
each page gets a filter of the distinct byte trigrams of its ASCII-lowercased values (a
trigram never spans two values) and the range of its rows' ``_timestamp``, so that a search
prunes pages, not only row groups. The hashing is numpy over each page's whole byte buffer:
no per-row Python. A filter is 16 bytes (the page's least and greatest time, int64 little
endian) and then ``BITS_PER_GRAM`` bits per distinct trigram; ``may_hold`` answers False only
when a trigram of the searched text was never added.

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
    text = values.cast(pa.large_string())
    _, offsets_buffer, data_buffer = text.buffers()
    raw = np.frombuffer(offsets_buffer, np.int64, len(text) + 1, text.offset * 8)
    offsets = raw - raw[0]
    size = int(offsets[-1])
    padded = np.zeros(size + 4, np.uint8)
    if size:
        padded[:size] = np.frombuffer(data_buffer, np.uint8, size, int(raw[0]))
        upper = (padded >= ord("A")) & (padded <= ord("Z"))
        padded[upper] += ord("a") - ord("A")  # ASCII lowercase: UTF-8's other bytes are >= 0x80
    # the trigram at each byte: its little-endian four bytes at every offset, the fourth cut
    windows = np.ndarray((size,), np.dtype("<u4"), padded.data, 0, (1,)) & np.uint32(0xFFFFFF)
    cut = np.zeros(size, np.bool_)  # windows running past their value's end
    ends = offsets[1:]
    cut[ends[ends >= 1] - 1] = True
    cut[ends[ends >= 2] - 2] = True
    scratch = np.empty(1 << 24, np.int32)
    out: list[bytes | None] = []
    for page in range(0, len(values), ROWS):
        last = min(page + ROWS, len(values))
        head = _head(times, page, last)
        low, high = int(offsets[page]), int(offsets[last])
        bits = _bits(windows[low:high][~cut[low:high]], scratch)
        out.append(None if head is None or bits is None else head + bits)
    heads = pa.array(out, pa.binary())
    starts = np.arange(0, len(values), ROWS)
    slots = np.full(len(values), -1, np.int64)
    slots[starts] = np.arange(len(starts))
    return heads.take(pa.array(slots, mask=slots < 0))


def _bits(found: np.ndarray, scratch: np.ndarray) -> bytes | None:
    """The filter of trigrams ``found`` (repeats allowed), None when too many. ``scratch``
    holds an int32 per possible trigram: each distinct one is the trigram whose position
    its slot ends up holding."""
    order = np.arange(len(found), dtype=np.int32)
    scratch[found] = order
    distinct = found[scratch[found] == order]
    size = max(64, 1 << (len(distinct) * BITS_PER_GRAM - 1).bit_length())
    if size > MAX_BYTES * 8:
        return None
    filled = np.zeros(size, np.bool_)
    filled[_positions(distinct, size).ravel()] = True
    return np.packbits(filled, bitorder="little").tobytes()


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
