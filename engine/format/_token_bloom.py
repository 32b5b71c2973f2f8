"""Token bloom filters: which words a block's text may hold, in a few bits per word.

A filter is a bit array of ``8 * len(bytes)`` bits; a word sets HASHES bits chosen by double
hashing of a 64-bit hash of its UTF-8 bytes. Hashing is numpy over the whole array of a
block's distinct words (a polynomial over the bytes, then a 64-bit mixer): no per-word
Python. ``may_hold`` answers False only when the word was never added.

>>> bits = build(pa.array(["timeout", "database"]))
>>> may_hold(bits, "timeout"), may_hold(bits, "database"), may_hold(bits, "refused")
(True, True, False)
>>> may_hold(build(pa.array([], pa.string())), "timeout")
False
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

BITS_PER_WORD = 10
HASHES = 6
"""About 1 % false positives at 10 bits per word and 6 hashes."""
MAX_BYTES = 1 << 20
"""A block with more distinct words than fit here gets no filter (it is always read)."""

_BASE = np.uint64(0x100000001B3)
_MIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))


def _hashes(words: pa.Array) -> np.ndarray:
    """A 64-bit hash per string of ``words`` (no nulls), from its bytes."""
    if len(words) == 0:
        return np.zeros(0, np.uint64)
    words = words.cast(pa.large_string()) if not pa.types.is_large_string(words.type) else words
    _, offsets_buffer, data_buffer = words.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64, len(words) + 1, words.offset * 8)
    start, end = int(offsets[0]), int(offsets[-1])
    data = (
        np.frombuffer(data_buffer, np.uint8, end - start, start).astype(np.uint64)
        if end > start
        else np.zeros(0, np.uint64)
    )
    lengths = np.diff(offsets)
    # byte i of a word weighs BASE ** (its distance from the word's end), modulo 2 ** 64
    ends = np.repeat(offsets[1:] - start, lengths)
    distance = ends - np.arange(end - start) - 1
    powers = np.cumprod(np.full(int(lengths.max(initial=0)) + 1, _BASE, np.uint64))
    powers = np.concatenate([np.ones(1, np.uint64), powers[:-1]])
    weighted = data * powers[distance] if len(data) else data
    h = np.zeros(len(words), np.uint64)
    nonempty = lengths > 0
    if len(data):
        h[nonempty] = np.add.reduceat(weighted, (offsets[:-1] - start)[nonempty])
    h ^= lengths.astype(np.uint64)
    for mix in _MIX:  # murmur3's finalizer: every input bit moves every output bit
        h ^= h >> np.uint64(33)
        h *= mix
    h ^= h >> np.uint64(33)
    return h


def _positions(hashes: np.ndarray, bits: int) -> np.ndarray:
    """The HASHES bit positions of each hash, shape (len, HASHES)."""
    low = hashes & np.uint64(0xFFFFFFFF)
    high = (hashes >> np.uint64(32)) | np.uint64(1)
    steps = np.arange(HASHES, dtype=np.uint64)
    return (low[:, None] + steps[None, :] * high[:, None]) % np.uint64(bits)


def build(words: pa.Array) -> bytes | None:
    """The filter of distinct ``words`` (no nulls); None when they are too many."""
    size = -(-len(words) * BITS_PER_WORD // 64) * 8
    if size > MAX_BYTES:
        return None
    if size == 0:
        return b""
    filled = np.zeros(size * 8, np.bool_)
    filled[_positions(_hashes(words), size * 8).ravel().astype(np.int64)] = True
    return np.packbits(filled, bitorder="little").tobytes()


def may_hold(filter_bytes: bytes, word: str) -> bool:
    """Whether the block whose filter is ``filter_bytes`` may hold ``word``."""
    if not filter_bytes:
        return False
    bits = np.unpackbits(np.frombuffer(filter_bytes, np.uint8), bitorder="little")
    where = _positions(_hashes(pa.array([word], pa.string())), len(bits))[0]
    return bool(bits[where.astype(np.int64)].all())
