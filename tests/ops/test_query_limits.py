"""Each query limit on a real ``kyma serve``: a clear 4xx/429 naming the limit and its value,
and the server keeps serving (no worker stays wedged)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from ops_helpers import ingest, metric, query, request, serve_on, wait_until

ROWS = 100_000
# A cross join with a sparse filter: ~10^10 pairs, a few result rows a second, batch by batch.
SLOW = "SELECT a.x, b.x FROM nums a CROSS JOIN nums b WHERE (a.x * b.x) % 1009 = 1"


def _load_numbers(serve) -> None:  # type: ignore[no-untyped-def]
    assert query(serve, "CREATE TABLE nums (x long)")[0] == 200
    ingest(serve, "nums", [{"x": i} for i in range(ROWS)])


def _running(serve) -> float:  # type: ignore[no-untyped-def]
    return metric(request(f"{serve.url}/metrics")[2].decode(), "kyma_queries_running")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_timeout_and_concurrency(catalog_url: str, home: Path) -> None:
    serve = serve_on(
        catalog_url,
        home,
        KYMA_QUERY_TIMEOUT_SECONDS="2",
        KYMA_MAX_CONCURRENT_QUERIES="1",
        KYMA_MAX_RESULT_ROWS="0",
    )
    try:
        _load_numbers(serve)
        slow: dict = {}
        thread = threading.Thread(target=lambda: slow.update(answer=query(serve, SLOW)))
        thread.start()
        wait_until(lambda: _running(serve) == 1, 10, "the slow query running")
        status, headers, body = query(serve, "SELECT 1 AS one")
        assert status == 429, body
        assert headers["Retry-After"] == "1"
        assert body["error"] == "too_many_queries_error" and body["retryable"] is True
        assert (
            body["limit"] == "max_concurrent_queries"
            and "KYMA_MAX_CONCURRENT_QUERIES" in body["message"]
            and "(1)" in body["message"]
        )
        thread.join(timeout=30)
        status, _, body = slow["answer"]
        assert status == 408, body
        assert body["error"] == "query_timeout_error"
        assert (
            body["limit"] == "query_timeout_seconds"
            and "KYMA_QUERY_TIMEOUT_SECONDS" in body["message"]
            and "(2 s)" in body["message"]
        )
        assert request(f"{serve.url}/healthz")[0] == 200  # serving while it is cancelled
        wait_until(lambda: _running(serve) == 0, 30, "the abandoned query stopping")
        assert query(serve, "SELECT count(*) AS n FROM nums")[2]["rows"] == [[ROWS]]
        text = request(f"{serve.url}/metrics")[2].decode()
        assert metric(text, "kyma_queries_total", outcome="timeout") == 1
        assert metric(text, "kyma_queries_total", outcome="rejected") == 1
    finally:
        assert serve.stop() == 0


def test_memory_result_and_body_limits(catalog_url: str, home: Path) -> None:
    serve = serve_on(
        catalog_url,
        home,
        KYMA_QUERY_MEMORY_BYTES=str(1 << 20),
        KYMA_MAX_RESULT_ROWS="1000",
        KYMA_MAX_RESULT_BYTES=str(16 << 10),
        KYMA_MAX_BODY_BYTES=str(2 << 20),
    )
    try:
        _load_numbers(serve)
        for sql, env, value in (
            (
                "SELECT x, count(*) AS n FROM nums GROUP BY x ORDER BY x",
                "QUERY_MEMORY_BYTES",
                "(1048576)",
            ),
            ("SELECT x FROM nums", "MAX_RESULT_ROWS", "1000 rows"),
            (
                "SELECT x, x + 1 AS y, x + 2 AS z FROM nums LIMIT 1000",
                "MAX_RESULT_BYTES",
                "16384 bytes",
            ),
        ):
            status, _, body = query(serve, sql)
            assert status == 413, body
            assert body["error"] == "limit_exceeded_error" and body["limit"] == env.lower(), body
            assert f"KYMA_{env}" in body["message"] and value in body["message"], body
        assert len(query(serve, "SELECT x FROM nums LIMIT 1000")[2]["rows"]) == 1000
        status, _, answer = request(f"{serve.url}/v1/ingest/nums", b'{"x": 1}\n' * (400_000))
        assert status == 413, answer
        assert json.loads(answer)["limit"] == "max_body_bytes" and b"2097152" in answer
        assert query(serve, "SELECT count(*) AS n FROM nums")[2]["rows"] == [[ROWS]]
    finally:
        assert serve.stop() == 0


def test_a_statement_without_a_timeout_gives_its_outside_work_no_deadline() -> None:
    """A cancellable statement with no timeout (an engine without limits, listed as running)
    hands its catalog statements no deadline; it once handed them 1 ms, which failed them on a
    loaded machine."""
    from kyma.engine.query._limits import QueryGate, QueryLimits, cancelled_with_statement

    def work() -> float | None:
        with cancelled_with_statement(lambda: None) as left:
            return left

    assert QueryGate(None).run(work, threading.Event()) is None
    limited = QueryGate(QueryLimits(timeout_seconds=30)).run(work, threading.Event())
    assert limited is not None and 25 < limited <= 30
