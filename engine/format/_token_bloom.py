"""Token bloom filters: which words a block's text may hold, in a few bits per word.

A filter is a bit array of ``8 * len(bytes)`` bits; a word sets HASHES bits chosen by double
hashing of a 64-bit hash of its UTF-8 bytes (a polynomial over the bytes, then a 64-bit
mixer: ``native.strings.word_hash``), computed in one compiled pass over a block's distinct
words. ``may_hold`` answers False only when the word was never added.

>>> bits = build(pa.array(["timeout", "database"]))
>>> may_hold(bits, "timeout"), may_hold(bits, "database"), may_hold(bits, "refused")
(True, True, False)
>>> may_hold(build(pa.array([], pa.string())), "timeout")
False
"""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.native import strings

BITS_PER_WORD = 10
HASHES = 6
"""About 1 % false positives at 10 bits per word and 6 hashes."""
MAX_BYTES = 1 << 20
"""A block with more distinct words than fit here gets no filter (it is always read)."""


def build(words: pa.Array) -> bytes | None:
    """The filter of distinct ``words`` (no nulls); None when they are too many."""
    return strings.word_filter(words, BITS_PER_WORD, HASHES, MAX_BYTES)


def may_hold(filter_bytes: bytes, word: str) -> bool:
    """Whether the block whose filter is ``filter_bytes`` may hold ``word``."""
    if not filter_bytes:
        return False
    bits = len(filter_bytes) * 8
    found = strings.word_hash(word.encode())
    low, high = found & 0xFFFFFFFF, (found >> 32) | 1
    for step in range(HASHES):
        where = (low + step * high) % bits
        if not filter_bytes[where >> 3] >> (where & 7) & 1:
            return False
    return True
