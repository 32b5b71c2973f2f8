"""Decoded columns kept in memory (``KYMA_QUERY_CACHE_BYTES``): answers and stats are those of
the Parquet scans; the cache stays within its size; a larger scan streams from Parquet."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine
from kyma.ingest.write_path import WritePath

values = st.lists(st.none() | st.integers(-5, 9), min_size=1, max_size=12)
QUERIES = [
    "SELECT n, s, w FROM {t} WHERE n > {k} ORDER BY n, s, w",
    "SELECT s, count(*) AS c, sum(n) AS total FROM {t} GROUP BY s ORDER BY s",
    "SELECT w, max(n) AS top FROM {t} WHERE w IS NULL OR n < {k} GROUP BY w ORDER BY w",
]


@pytest.fixture
def engines(services):  # type: ignore[no-untyped-def]
    """(cached, uncached) engines on one catalog, writing three-row blocks."""
    fmt = segment_format("parquet", block_rows=3)
    services.write_path = WritePath(services.catalog, services.stores.ledger, services.store, fmt)
    cached = QueryEngine(services.catalog, services.store, fmt, decoded_bytes=64 << 20)
    return services, cached, QueryEngine(services.catalog, services.store, fmt)


def _batch(numbers: list[int | None]) -> pa.RecordBatch:
    words = [None if n is None else f"w{n % 3}" for n in numbers]
    return pa.record_batch({"n": pa.array(numbers, pa.int64()), "s": pa.array(words)})


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(values, min_size=1, max_size=4), st.integers(-6, 9), st.sampled_from(QUERIES))
def test_cached_columns_answer_as_parquet_does(engines, extents, k, query) -> None:
    services, cached, uncached = engines
    table = f"t_{uuid.uuid4().hex[:8]}"
    cached.execute(f"CREATE TABLE {table} (n long, s string)")
    for i, numbers in enumerate(extents):
        if i == len(extents) // 2:  # older extents lack it: null there
            cached.execute(f"ALTER TABLE {table} ADD COLUMN w string")
        batch = _batch(numbers)
        if i >= len(extents) // 2:
            batch = batch.append_column("w", pa.array([f"x{n}" for n in range(len(numbers))]))
        services.write_path.ingest_batches(table, [batch], source="test")
    sql = query.format(t=table, k=k)
    before = cached.planner.decoded.bytes
    for _ in range(2):  # decoding, then from the kept columns
        got, want = cached.execute(sql), uncached.execute(sql)
        assert got.table.to_pylist() == want.table.to_pylist(), sql
        assert got.table.schema == want.table.schema  # answers keep the table's types
        drop = {"elapsed_ms", "tables", "catalog_reads"}  # the engines ask apart
        assert {k: v for k, v in got.stats.items() if k not in drop} == {
            k: v for k, v in want.stats.items() if k not in drop
        }
    kept_blocks = got.stats["blocks_after_stats"]
    assert (cached.planner.decoded.bytes > before) == (kept_blocks > 0), kept_blocks
    assert cached.planner.decoded.bytes <= 64 << 20


def test_columns_decode_once_and_the_cache_keeps_its_size(engines) -> None:
    services, _, _ = engines
    fmt = services.write_path.format
    small = QueryEngine(services.catalog, services.store, fmt, decoded_bytes=2000)
    small.execute("CREATE TABLE big (n long, s string)")
    for numbers in (list(range(10)), list(range(10, 2010))):  # ~0.2 KB and ~30 KB of n
        services.write_path.ingest_batches("big", [_batch(numbers)], source="test")
    sql = "SELECT count(*) AS c, sum(n) AS total FROM big WHERE n >= 0"
    assert small.execute(sql).table.to_pylist() == [{"c": 2010, "total": 2_019_045}]
    assert small.planner.decoded.bytes == 0  # larger than the cache: streamed from Parquet
    sql = "SELECT sum(n) AS total FROM big WHERE n < 10"  # stage 2 keeps the small extent
    first = small.execute(sql)
    assert first.table.to_pylist() == [{"total": 45}]
    kept = small.planner.decoded.bytes
    assert 0 < kept <= 2000
    again = small.execute(sql)
    assert again.table.to_pylist() == first.table.to_pylist()
    assert again.stats["rows_scanned"] == first.stats["rows_scanned"] == 10  # 4 blocks
    assert small.planner.decoded.bytes == kept
