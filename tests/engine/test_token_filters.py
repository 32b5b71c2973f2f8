"""Stage 3 for text: per-row-group token filters skip the blocks without a searched word.

``has_token``, word ``LIKE`` and ``ILIKE`` read only the blocks whose filter may hold the
word; the answer is unchanged (Postgres answers the same LIKE over the same rows) and the
stats of the answer show the blocks stage 3 kept.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from like_patterns import like_regex

from kyma.engine.format._token_filter import like_words
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.local import LocalStore

BLOCKS = 8
BLOCK_ROWS = 500
NEEDLE_ROW = 3 * BLOCK_ROWS + 17  # in block 3 only


def _messages() -> list[str]:
    verbs = ["connect", "read", "write", "query"]
    # two words of their own per row: the extent's token set (stage 1) overflows its cap
    rows = range(BLOCKS * BLOCK_ROWS)
    out = [f"{verbs[i % 4]} upstream {i} after {i % 97} ms req{i} span{i * 7919}" for i in rows]
    out[NEEDLE_ROW] = "write upstream zebra-7 refused"
    return out


def test_rare_words_read_only_the_blocks_that_hold_them(services, pg_server_url) -> None:
    services.query.execute("CREATE TABLE notes (n long, message string)")
    services.write_path.format = segment_format("parquet", block_rows=BLOCK_ROWS)
    messages = _messages()
    batch = pa.record_batch(
        {"n": pa.array(range(len(messages)), pa.int64()), "message": pa.array(messages)}
    )
    services.write_path.ingest_batches("notes", iter([batch]), source="test")
    with psycopg.connect(pg_server_url, autocommit=True) as pg:
        pg.execute("CREATE TEMP TABLE notes (n bigint, message text)")
        with pg.cursor().copy("COPY notes (n, message) FROM STDIN") as copy:
            for n, m in enumerate(messages):
                copy.write_row((n, m))
        for where, blocks, expected in [
            ("has_token(message, 'zebra')", 1, [NEEDLE_ROW]),
            ("message LIKE '% zebra-7 %'", 1, None),
            ("message ILIKE '% ZEBRA-7 REFUSED'", 1, None),
            ("message LIKE '%zebra%'", 1, None),  # a substring: the trigram filters
            ("has_token(message, 'absent')", 0, []),
            ("has_token(message, 'absent') OR has_token(message, 'zebra')", 1, [NEEDLE_ROW]),
            ("has_token(message, 'zebra') AND n > 0", 1, [NEEDLE_ROW]),
            ("NOT message LIKE '% zebra-7 %'", BLOCKS, None),
        ]:
            sql = f"SELECT n FROM notes WHERE {where} ORDER BY n"
            answer = services.query.execute(sql)
            assert answer.stats["blocks_after_stats"] == BLOCKS, where
            assert answer.stats["blocks_after_tokens"] == blocks, where
            if expected is None:  # LIKE and ILIKE: Postgres's answer
                expected = [r[0] for r in pg.execute(sql).fetchall()]
            assert answer.table.column("n").to_pylist() == expected, where
    explained = services.query.execute(
        "EXPLAIN SELECT n FROM notes WHERE has_token(message, 'zebra')"
    )
    plans = explained.table.column("plan").to_pylist()
    assert any("stage 3 token filters: 1/8 blocks" in p for p in plans), plans


@pytest.fixture
def cold(stores, tmp_path: Path):  # type: ignore[no-untyped-def]
    """``services`` with the decoded-column cache off: every statement reads Parquet."""
    from kyma.services import wire_services
    from kyma.settings import Settings

    home = tmp_path / "home"
    settings = Settings(home=home, catalog_url=stores.catalog.url, query_cache_bytes=0)
    services = wire_services(settings, stores, LocalStore(tmp_path / "objects"))
    yield services
    services.close()


def test_datafusion_skips_the_row_groups_stage_3_pruned(cold) -> None:
    """An extent whose row groups stage 3 pruned stays in DataFusion's Parquet scan, which
    skips them by their times (``_row_groups``); the answers do not change."""
    services = cold
    services.query.execute("CREATE TABLE timed (n long, message string)")
    services.write_path.format = segment_format("parquet", block_rows=BLOCK_ROWS)
    messages = _messages()
    times = [1_700_000_000 * 10**9 + i * 10**9 for i in range(len(messages))]
    batch = pa.record_batch(
        {
            "_timestamp": pa.array(times, pa.timestamp("ns", tz="UTC")),
            "n": pa.array(range(len(messages)), pa.int64()),
            "message": pa.array(messages),
        }
    )
    services.write_path.ingest_batches("timed", iter([batch]), source="test")
    for sql in [
        "SELECT n, message FROM timed WHERE has_token(message, 'zebra') ORDER BY n",
        "SELECT n FROM timed WHERE message LIKE '% zebra-7 %' AND n > 2 ORDER BY n",
        "SELECT n FROM timed WHERE has_token(message, 'zebra') ORDER BY _timestamp DESC LIMIT 3",
        "SELECT count(*) FROM timed WHERE has_token(message, 'connect') AND n < 600",
    ]:
        pruned = services.query.execute(sql)
        assert pruned.stats["blocks_after_tokens"] < BLOCKS, sql
        whole = services.query.execute(sql, pruning=False)
        assert pruned.table.to_pylist() == whole.table.to_pylist(), sql
    found = services.query.execute("SELECT n FROM timed WHERE has_token(message, 'zebra')")
    assert found.table.column("n").to_pylist() == [NEEDLE_ROW]
    explained = services.query.execute(
        "EXPLAIN ANALYZE SELECT n FROM timed WHERE has_token(message, 'zebra')"
    )
    plans = " ".join(explained.table.column("plan").to_pylist())
    assert f"row_groups_pruned_statistics={BLOCKS} total \u2192 1 matched" in plans, plans


def test_a_needle_in_a_large_extent_after_compaction_keeps_its_filters(services) -> None:
    """Compaction writes the same layout: the compacted extent's row groups have filters."""
    services.query.execute("CREATE TABLE notes (message string)")
    services.write_path.format = segment_format("parquet", block_rows=BLOCK_ROWS)
    messages = _messages()
    for start in range(0, len(messages), 1000):  # small extents, then one compacted
        chunk = pa.record_batch({"message": pa.array(messages[start : start + 1000])})
        services.write_path.ingest_batches("notes", iter([chunk]), source="test")
    services.compact("notes")
    answer = services.query.execute("SELECT message FROM notes WHERE has_token(message, 'zebra')")
    assert answer.table.column("message").to_pylist() == [messages[NEEDLE_ROW]]
    assert answer.stats["extents_after_catalog"] == 1
    assert answer.stats["blocks_after_tokens"] == 1


TEXT_CHARS = st.sampled_from(list("ab9 -_%Kk\u212a\u017fsS"))
PATTERN_CHARS = st.sampled_from(list("ab9 -_%Kk\u212a\u017fsS\\"))


@given(st.text(TEXT_CHARS, max_size=12), st.text(PATTERN_CHARS, max_size=10), st.booleans())
def test_every_text_a_like_pattern_matches_holds_its_words(
    text: str, pattern: str, insensitive: bool
) -> None:
    """The words ``like_words`` takes from a pattern are tokens of any text it matches
    (ILIKE: even where non-ASCII letters such as the Kelvin sign fold to ASCII ones)."""
    regex = like_regex(pattern, insensitive)
    if regex is None or not regex.fullmatch(text):
        return
    # the writer's words: ASCII-lowercased, cut at every other character
    tokens = pc.split_pattern_regex(pc.ascii_lower(pa.array([text])), "[^a-z0-9]+")[0].as_py()
    for word in like_words(pattern, insensitive=insensitive):
        assert word in tokens, (text, pattern, word)
