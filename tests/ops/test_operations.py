"""/metrics after ingest and queries, JSON logs with request ids, /healthz and /readyz."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from ops_helpers import ingest, metric, query, request, serve_on, wait_until

from kyma.runtime.postgres import EmbeddedPostgres


def test_metrics_and_json_logs_with_request_ids(catalog_url: str, tmp_path: Path) -> None:
    serve = serve_on(
        catalog_url,
        tmp_path / "home",
        KYMA_LOG_FORMAT="json",
        KYMA_BLOCK_ROWS="100",
    )
    try:
        assert query(serve, "CREATE TABLE events (n long)")[0] == 200
        for i in range(3):
            ingest(serve, "events", [{"n": i * 1000 + r} for r in range(1000)], key=f"k{i}")
        ingest(serve, "events", [{"n": r} for r in range(1000)], key="k0")  # a replay
        status, headers, body = query(serve, "SELECT count(*) AS c FROM events WHERE n = 2500")
        assert status == 200 and body["rows"] == [[1]]
        assert len(headers["X-Request-Id"]) == 32  # generated
        status, headers, _ = request(
            f"{serve.url}/v1/query",
            json.dumps({"sql": "SELECT nope FROM events"}).encode(),
            {"X-Request-Id": "req-42"},
        )
        assert status == 404 and headers["X-Request-Id"] == "req-42"

        status, headers, raw = request(f"{serve.url}/metrics")
        text = raw.decode()
        assert status == 200 and headers["Content-Type"].startswith("text/plain")
        assert metric(text, "kyma_ingest_rows_total", path="rest") == 3000
        assert metric(text, "kyma_ingest_bytes_total", path="rest") > 0
        assert metric(text, "kyma_commit_seconds_count", path="rest") == 3
        assert "kyma_commit_conflicts_total" in text
        assert metric(text, "kyma_queries_total", outcome="ok") >= 2
        assert metric(text, "kyma_queries_total", outcome="error") == 1
        assert metric(text, "kyma_query_seconds_count", outcome="ok") >= 2
        assert metric(text, "kyma_query_pruning_total", stage="extents_total") == 3
        assert metric(text, "kyma_query_pruning_total", stage="extents_after_catalog") == 1
        blocks = metric(text, "kyma_query_pruning_total", stage="blocks_total")
        kept = metric(text, "kyma_query_pruning_total", stage="blocks_after_stats")
        assert blocks == 10 and kept == 1
        assert metric(text, "kyma_http_requests_total", method="POST", status="404") == 1
        route = {"method": "POST", "status": "200"}
        assert metric(text, "kyma_http_requests_total", route="/v1/ingest/<table>", **route) == 4
        assert metric(text, "kyma_http_requests_total", route="/v1/query", **route) >= 2
        assert metric(text, "process_resident_memory_bytes") > 0
        # The OTLP receiver's group commits report as sources, as Kafka and file drops do.
        assert metric(text, "kyma_source_rows_total", source="otlp-logs", type="otlp") == 0
        assert metric(text, "process_cpu_seconds_total") > 0
    finally:
        assert serve.stop() == 0
    lines = [json.loads(line) for line in serve.output if line.startswith("{")]
    assert lines, serve.output
    ours = [line for line in lines if line.get("request_id") == "req-42"]
    assert any("POST /v1/query 404" in line["message"] for line in ours), lines
    # One line per statement, with the request's id: outcome, time, rows or the error's kind.
    error = r"query error [\d.]+ ms undefined_column_error"  # the unknown column's own kind
    assert any(re.fullmatch(error, x["message"]) for x in ours)
    counted = [
        x["message"] for x in lines if x["logger"] == "kyma.query" and "1 rows" in x["message"]
    ]
    assert any(re.fullmatch(r"query ok [\d.]+ ms 1 rows", m) for m in counted), lines
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)


def test_healthz_and_readyz_name_the_failing_part(pg_server_url: str, tmp_path: Path) -> None:
    """The catalog is a Postgres of the test's own, stopped and started under kyma serve."""
    folder = Path(tempfile.mkdtemp(prefix="kyma-ready-", dir="/tmp"))  # postgres can reach it
    pg = EmbeddedPostgres(folder / "catalog", log=lambda _: None)
    url = pg.start()
    serve = None
    try:
        serve = serve_on(url, tmp_path / "home")
        status, _, body = request(f"{serve.url}/readyz")
        assert status == 200 and json.loads(body)["status"] == "ready", body
        pg.stop()
        status, _, body = request(f"{serve.url}/readyz", timeout=30)
        answer = json.loads(body)
        assert status == 503 and answer["failed"] == ["catalog"], answer
        assert answer["checks"]["object_store"] == "ok"
        assert answer["checks"]["catalog"].startswith("error: catalog unavailable")
        assert request(f"{serve.url}/healthz")[0] == 200  # the process is up
        # Back on the same port (start() would pick a new one): the pool reconnects.
        port = urlsplit(url).port
        pg._pg_ctl("start", "-w", "-l", str(pg.log_file), "-o", f"-p {port} -k {pg.socket_dir}")
        wait_until(lambda: request(f"{serve.url}/readyz")[0] == 200, 30, "ready again")
    finally:
        if serve is not None:
            serve.stop()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    with psycopg.connect(pg_server_url):  # the session's Postgres was not touched
        pass


def test_a_busy_http_port_names_the_setting_without_a_traceback(
    catalog_url: str, tmp_path: Path
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "kyma", "serve"],
            env={
                **os.environ,
                "KYMA_HOME": str(tmp_path / "home"),
                "KYMA_CATALOG_URL": catalog_url,
                "KYMA_HTTP_PORT": str(port),
                "KYMA_FLIGHT_PORT": "0",
                "KYMA_OTLP_GRPC_PORT": "0",
                "KYMA_OTLP_HTTP_PORT": "0",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert f"kyma: KYMA_HTTP_PORT: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "set KYMA_HTTP_PORT to a free port" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
