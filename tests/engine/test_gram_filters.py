"""Stage 3 for substrings: per-page trigram filters skip the pages (and row groups) whose
text cannot hold a LIKE / ILIKE pattern's literal runs or a ``has_token`` word.

The answers are Postgres's over the same rows and the same with pruning off; the answer's
stats show the pages the trigram filters kept.
"""

from __future__ import annotations

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from like_patterns import like_regex

from kyma.engine.format import _gram_bloom, _gram_filter
from kyma.engine.format.choice import segment_format

BLOCK_ROWS = 4 * _gram_bloom.ROWS
BLOCKS = 2
PAGES = BLOCKS * BLOCK_ROWS // _gram_bloom.ROWS
NEEDLES = {
    2 * _gram_bloom.ROWS + 5: "payment 50% off at zanzibar for Straße",
    5 * _gram_bloom.ROWS + 9: "path a_b\\c done, 300\u212a (kelvin sign)",
    6 * _gram_bloom.ROWS + 1: "ZANZIBAR again, word-ish: zanzibarian",
}
"""Rows of pages 2, 5 and 6 (of 8, in two row groups of four pages)."""
ROWS = _gram_bloom.ROWS
PAYMENT_ROW = 2 * ROWS + 5


def _messages() -> list[str]:
    n = BLOCKS * BLOCK_ROWS
    numbers = pa.array(np.arange(n)).cast(pa.string())
    rest = pa.array((np.arange(n) % 97).astype(str))
    out = pc.binary_join_element_wise("connect upstream ", numbers, " after ", rest, " ms", "")
    messages = out.to_pylist()
    for row, text in NEEDLES.items():
        messages[row] = text
    return messages


@pytest.fixture
def loaded(services, pg_server_url):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE lines (n long, message string)")
    services.write_path.format = segment_format("parquet", block_rows=BLOCK_ROWS)
    messages = _messages()
    times = 1_700_000_000 * 10**9 + np.arange(len(messages), dtype=np.int64) * 10**9
    batch = pa.record_batch(
        {
            "_timestamp": pa.array(times, pa.timestamp("ns", tz="UTC")),
            "n": pa.array(range(len(messages)), pa.int64()),
            "message": pa.array(messages),
        }
    )
    services.write_path.ingest_batches("lines", iter([batch]), source="test")
    with psycopg.connect(pg_server_url, autocommit=True) as pg:
        pg.execute("CREATE TEMP TABLE lines (n bigint, message text)")
        with pg.cursor().copy("COPY lines (n, message) FROM STDIN") as copy:
            for n, m in enumerate(messages):
                copy.write_row((n, m))
        yield services, pg


CASES = [
    # (where, pages kept at most, whether Postgres is the oracle)
    ("message LIKE '%zanzibar%'", 2, True),  # pages 2 and 6
    ("message LIKE '%zan_ibar%'", 2, True),  # '_' ends a run: 'zan' and 'ibar'
    ("message LIKE '%50\\%%'", 1, True),  # an escaped '%' is a literal byte
    ("message LIKE '%a\\_b\\\\c%'", 1, True),  # escaped '_' and backslash
    ("message ILIKE '%ZANZIBAR%'", 2, True),  # both cases, one page each
    ("message LIKE '%ZANZIBAR%'", 2, True),  # LIKE prunes ASCII-case-blind: conservative
    ("message LIKE '%Straße%'", 1, True),  # non-ASCII bytes are trigrams too
    ("message ILIKE '%STRASSE%'", PAGES, True),  # no run without k, s, i: nothing pruned
    ("message ILIKE '%300\u212a%'", PAGES, False),  # a non-ASCII letter ends an ILIKE run
    ("message ILIKE '%300k%'", PAGES, False),  # 'k' may be the Kelvin sign: not searched
    ("message LIKE '%300\u212a%'", 1, True),
    ("has_token(message, 'zanzibar')", 2, False),  # Postgres has no has_token
    ("has_token(message, 'Zanzibar') AND n > 0", 2, False),
    ("message LIKE '%zanzibar%' OR message LIKE '%50\\%%'", 2, True),
    ("message LIKE '%z_n%'", PAGES, True),  # no literal run of three: nothing pruned
    ("message LIKE '%absent-word%'", 0, True),
    ("NOT message LIKE '%zanzibar%'", PAGES, True),
]


def test_substring_search_reads_only_the_pages_that_may_hold_it(loaded, monkeypatch) -> None:
    services, pg = loaded
    for where, most, postgres in CASES:
        sql = f"SELECT n FROM lines WHERE {where} ORDER BY n"
        answer = services.query.execute(sql)
        stats = answer.stats
        kept = stats["pages_after_grams"] if stats["pages_searched"] else PAGES
        assert kept <= most, (where, stats)
        if most < PAGES:
            assert stats["pages_searched"] == PAGES, (where, stats)
        whole = services.query.execute(sql, pruning=False)
        got = answer.table.column("n").to_pylist()
        assert got == whole.table.column("n").to_pylist(), where
        if postgres:
            assert got == [r[0] for r in pg.execute(sql).fetchall()], where
    needle = services.query.execute("SELECT n FROM lines WHERE message LIKE '%50\\%%'")
    assert needle.table.column("n").to_pylist() == [PAYMENT_ROW]
    assert needle.stats["blocks_after_tokens"] == 1  # the row group without it: skipped
    explained = services.query.execute(f"EXPLAIN SELECT n FROM lines WHERE {CASES[0][0]}")
    plans = " ".join(explained.table.column("plan").to_pylist())
    assert f"trigram filters: 2/{PAGES} pages" in plans, plans
    # Filters this reader does not know (built otherwise, or none: extents written before
    # them) are not probed, and the answers do not change.
    monkeypatch.setattr(_gram_bloom, "ROWS", ROWS * 2)
    monkeypatch.setattr(_gram_filter, "_cache", _gram_filter.Cache(1 << 20, lambda f: 1))
    sql = "SELECT n FROM lines WHERE message LIKE '%zanzibar%' ORDER BY n"
    answer = services.query.execute(sql)
    assert answer.table.column("n").to_pylist() == [PAYMENT_ROW, 6 * ROWS + 1]
    assert answer.stats["pages_searched"] == 0


@given(st.lists(st.text(st.sampled_from(list("aZ9 %_\u00df\u212a\\")), max_size=9), max_size=20))
def test_a_page_filter_holds_every_trigram_of_its_values(values: list[str]) -> None:
    """No false negatives: the filter of each page (nulls among the values, a sliced array)
    holds every trigram of every value's ASCII-lowercased bytes."""
    array = pa.array([None, *values, None], pa.string()).slice(1, len(values))
    times = pa.array(range(len(values)), pa.timestamp("ns"))
    column = _gram_bloom.build(array, times)
    for page in range(0, len(values), _gram_bloom.ROWS):
        bits = column[page].as_py()
        assert bits is not None
        assert _gram_bloom.span(bits) == (page, min(page + _gram_bloom.ROWS, len(values)) - 1)
        texts = values[page : page + _gram_bloom.ROWS]
        assert all(_gram_bloom.may_hold(bits, [t]) for t in texts), texts


TEXT_CHARS = st.sampled_from(list("ab9 -_%Kk\u212a\u017fsSi\u0130\u00df"))
PATTERN_CHARS = st.sampled_from(list("ab9 -_%Kk\u212a\u017fsSi\u0130\u00df\\"))


@given(st.text(TEXT_CHARS, max_size=12), st.text(PATTERN_CHARS, max_size=10), st.booleans())
def test_every_text_a_like_pattern_matches_holds_its_literal_runs(
    text: str, pattern: str, insensitive: bool
) -> None:
    """The runs ``like_literals`` takes from a pattern are substrings of any text it matches,
    ASCII case ignored (ILIKE: even where non-ASCII letters fold to ASCII ones)."""
    regex = like_regex(pattern, insensitive)
    if regex is None or not regex.fullmatch(text):
        return
    lowered = "".join(c.lower() if c.isascii() else c for c in text)
    for run in like_literals(pattern, insensitive=insensitive):
        assert "".join(c.lower() if c.isascii() else c for c in run) in lowered, (text, run)


like_literals = _gram_filter.like_literals
