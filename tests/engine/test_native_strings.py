"""The compiled string kernels (``engine/native/strings.pyx``) against independent pure-Python
references: the same words, distinct values and counts, and the same filter bits, byte for
byte, on small random arrays (sliced, chunked, with nulls, narrow and large offsets,
non-ASCII bytes next to words)."""

from __future__ import annotations

import re

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kyma.engine.format import _gram_bloom, _token_bloom
from kyma.engine.native import strings

ALPHABET = list(" \t-_./AbZz09é\u212a\u0130\u00df\x00")
TEXTS = st.lists(st.none() | st.text(st.sampled_from(ALPHABET), max_size=14), max_size=24)
MASK = (1 << 64) - 1


def _array(texts: list[str | None], large: bool, cut: int, pieces: int) -> pa.Array:
    """``texts`` as a sliced string array, or as a chunked one of ``pieces`` chunks."""
    array = pa.array([None, *texts], pa.large_string() if large else pa.string()).slice(1)
    array = array.slice(min(cut, len(array)))
    if pieces < 2:
        return array
    step = -(-len(array) // pieces) or 1
    chunks = [array.slice(i, step) for i in range(0, len(array), step)]
    return pa.chunked_array(chunks or [array], array.type)


def _present(values: pa.Array) -> list[bytes]:
    return [v.encode() for v in values.to_pylist() if v is not None]


def _words(values: pa.Array) -> set[bytes]:
    """Runs of ASCII letters and digits of the ASCII-lowercased bytes (``bytes.lower`` leaves
    other bytes alone), of two bytes or more."""
    return {w for v in _present(values) for w in re.findall(rb"[a-z0-9]+", v.lower()) if len(w) > 1}


def _word_hash(word: bytes) -> int:
    h = 0
    for b in word:
        h = (h * 0x100000001B3 + b) & MASK
    h ^= len(word)
    for mix in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> 33
        h = (h * mix) & MASK
    return h ^ (h >> 33)


def _word_filter(words: list[bytes], per_word: int, hashes: int, max_bytes: int) -> bytes | None:
    size = -(-len(words) * per_word // 64) * 8
    if size > max_bytes:
        return None
    bits = bytearray(size)
    for word in words:
        h = _word_hash(word)
        low, high = h & 0xFFFFFFFF, (h >> 32) | 1
        for step in range(hashes):
            where = (low + step * high) % (size * 8)
            bits[where // 8] |= 1 << (where % 8)
    return bytes(bits)


def _gram_filter(values: list[bytes], max_bits: int) -> bytes | None:
    lowered = [v.lower() for v in values]
    grams = {v[i] | v[i + 1] << 8 | v[i + 2] << 16 for v in lowered for i in range(len(v) - 2)}
    size = 64
    while size < len(grams) * _gram_bloom.BITS_PER_GRAM:
        size *= 2
    if size > max_bits:
        return None
    bits = bytearray(size // 8)
    for g in grams:
        for odd in _gram_bloom._ODD:
            where = (g * int(odd) & MASK) >> (64 - size.bit_length() + 1)
            bits[where // 8] |= 1 << (where % 8)
    return bytes(bits)


@given(TEXTS, st.booleans(), st.integers(0, 3), st.integers(0, 3), st.integers(-1, 12))
def test_words_are_the_regex_words_of_the_present_values(texts, large, cut, pieces, limit) -> None:  # type: ignore[no-untyped-def]
    values = _array(texts, large, cut, pieces)
    expected = _words(values)
    found = strings.words(values, limit)
    if 0 <= limit < len(expected):
        assert found is None
        return
    assert found is not None and found.type == values.type
    assert sorted(w.encode() for w in found.to_pylist()) == sorted(expected)  # each once


@given(TEXTS, st.booleans(), st.integers(0, 3), st.integers(0, 3), st.integers(-1, 12))
def test_distinct_strings_and_their_count(texts, large, cut, pieces, limit) -> None:  # type: ignore[no-untyped-def]
    values = _array(texts, large, cut, pieces)
    expected = set(_present(values))
    found = strings.distinct(values, limit)
    counted = strings.count_distinct(values, limit)
    if 0 <= limit < len(expected):
        assert found is None and counted == limit + 1
        return
    assert found is not None and found.type == values.type and counted == len(expected)
    assert sorted(v.encode() for v in found.to_pylist()) == sorted(expected)


@given(
    st.lists(st.none() | st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), max_size=30),
    st.booleans(),
    st.integers(0, 3),
    st.integers(-1, 12),
)
def test_distinct_integers_and_their_count(values, wide, pieces, limit) -> None:  # type: ignore[no-untyped-def]
    kind = pa.int64() if wide else pa.int32()
    values = [v if v is None or wide else v % 2**31 - 2**30 for v in values]
    array = pa.chunked_array([pa.array(values[i :: pieces or 1], kind) for i in range(pieces or 1)])
    expected = {v for v in values if v is not None}
    given = array if pieces else array.chunk(0)
    found, counted = strings.distinct(given, limit), strings.count_distinct(given, limit)
    if 0 <= limit < len(expected):
        assert found is None and counted == limit + 1
        return
    assert found is not None and found.type == kind and counted == len(expected)
    assert sorted(found.to_pylist()) == sorted(expected)


@given(TEXTS, st.booleans(), st.integers(0, 3), st.integers(0, 3))
def test_spaces(texts, large, cut, pieces) -> None:  # type: ignore[no-untyped-def]
    values = _array(texts, large, cut, pieces)
    assert strings.spaces(values) == sum(v.count(b" ") for v in _present(values))


@given(st.sets(st.binary(max_size=9), max_size=40), st.integers(1, 12), st.integers(1, 7))
def test_word_filters_set_the_reference_bits(words, per_word, hashes) -> None:  # type: ignore[no-untyped-def]
    array = pa.array(sorted(words), pa.binary()).cast(pa.large_string(), safe=False)
    for max_bytes in (1 << 20, 8):
        expected = _word_filter(sorted(words), per_word, hashes, max_bytes)
        assert strings.word_filter(array, per_word, hashes, max_bytes) == expected
    texts = sorted({w.decode(errors="replace") for w in words})
    held = _token_bloom.build(pa.array(texts, pa.string()))
    assert held is not None
    assert all(_token_bloom.may_hold(held, text) for text in texts)


@settings(max_examples=60)
@given(TEXTS, st.booleans(), st.integers(0, 3), st.integers(1, 5), st.sampled_from([64, 1 << 19]))
def test_gram_filters_set_the_reference_bits(texts, large, cut, rows, max_bits) -> None:  # type: ignore[no-untyped-def]
    """Per page of ``rows`` values, null values' bytes included (none here: Arrow stores
    them empty)."""
    values = _array(texts, large, cut, 0)
    present = [(v or "").encode() for v in values.to_pylist()]
    pages = strings.gram_filters(
        values, rows, [int(m) for m in _gram_bloom._ODD], _gram_bloom.BITS_PER_GRAM, max_bits
    )
    expected = [_gram_filter(present[i : i + rows], max_bits) for i in range(0, len(present), rows)]
    assert pages == expected


def test_filters_read_as_those_written_before() -> None:
    """Filters written by the numpy versions these kernels replaced (main at 8a153b2) are
    what they write now, byte for byte: older extents keep answering."""
    words = pa.array(["timeout", "database", "get", "v2", "zanzibar", "x9"])
    assert _token_bloom.build(words) == bytes.fromhex("fc343bebc9f08091")
    values = pa.array(["Disk full on node-7", None, "timeout ÉTÉ", ""])
    pages = _gram_bloom.build(values, pa.array([5, 9, 7, 1], pa.timestamp("ns")))
    assert pages[0].as_py() == bytes.fromhex(
        "010000000000000009000000000000002005c11a04b20431c0180e33104148028882471080eb45c44000415002193a02"
    )
