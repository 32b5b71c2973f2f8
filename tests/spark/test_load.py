"""Bulk loads on Spark: NDJSON, CSV and Parquet equal the same rows over REST, once."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kyma.engine.errors import IngestError
from kyma.engine.gc import collect_orphans
from kyma.ingest.load import LoadIdentity, LoadRequest, _job, _splits
from kyma.ingest.load._progress import ProgressChannel, SplitReporter

ROWS = 60_000
FILES = 3
DDL = "(n long, host string, ms real, ok bool, at timestamp)"


def row(n: int) -> dict:
    return {
        "n": n,
        "host": f"h{n % 7}",
        "ms": n / 8,
        "ok": n % 2 == 0,
        "at": f"2026-01-01T00:{(n // 60) % 60:02d}:{n % 60:02d}Z",
    }


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The same rows as NDJSON, CSV and Parquet files, FILES of each."""
    root = tmp_path_factory.mktemp("inputs")
    per = ROWS // FILES
    for fmt in ("ndjson", "csv", "parquet"):
        (root / fmt).mkdir()
    for i in range(FILES):
        rows = [row(n) for n in range(i * per, (i + 1) * per)]
        with (root / "ndjson" / f"part-{i}.ndjson").open("w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        with (root / "csv" / f"part-{i}.csv").open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**r, "ok": str(r["ok"]).lower()} for r in rows)
        table = pa.Table.from_pylist(rows)
        pq.write_table(table, root / "parquet" / f"part-{i}.parquet", row_group_size=per // 2)
    return root


def rest_reference(services, inputs: Path) -> None:  # type: ignore[no-untyped-def]
    services.query.execute(f"CREATE TABLE rest {DDL}")
    for path in sorted((inputs / "ndjson").iterdir()):
        services.write_path.ingest_ndjson("rest", path.read_bytes())


def differences(services, table: str) -> list:  # type: ignore[no-untyped-def]
    """Rows in one table and not the other, both ways (columns of the data only)."""
    columns = "n, host, ms, ok, at"
    answer = services.query.execute(
        f"(SELECT {columns} FROM {table} EXCEPT SELECT {columns} FROM rest)"
        f" UNION ALL (SELECT {columns} FROM rest EXCEPT SELECT {columns} FROM {table})"
    )
    return answer.table.to_pylist()


@pytest.mark.parametrize("fmt", ["ndjson", "csv", "parquet"])
def test_a_load_equals_rest_and_a_rerun_is_a_no_op(spark, services, inputs, fmt) -> None:
    rest_reference(services, inputs)
    services.query.execute(f"CREATE TABLE bulk {DDL}")
    request = LoadRequest("bulk", str(inputs / fmt))
    job = services.jobs.load(request)
    assert job.state == "succeeded"
    assert job.result["rows"] == ROWS
    progress = job.progress.to_json()
    assert (progress["phase"], progress["files_done"], progress["rows_done"]) == (
        "done",
        FILES,
        ROWS,
    )
    count = services.query.execute("SELECT count(*) AS n, count(DISTINCT n) AS d FROM bulk")
    assert count.table.to_pylist() == [{"n": ROWS, "d": ROWS}]
    assert differences(services, "bulk") == []
    stats = services.catalog.column_stats("bulk")
    assert (stats["n"]["rows"], stats["n"]["nulls"]) == (ROWS, 0)  # the tasks' writes
    snapshots = services.catalog.get_table("bulk").current_snapshot_id
    again = services.jobs.load(request)
    assert again.result["replayed"] is True
    assert services.catalog.get_table("bulk").current_snapshot_id == snapshots


def test_new_ndjson_fields_evolve_the_table_before_tasks_write(spark, services, tmp_path) -> None:
    (tmp_path / "a.ndjson").write_text('{"n": 1, "colour": "red"}\n{"n": 2}\n')
    services.query.execute("CREATE TABLE bulk (n long)")
    job = services.jobs.load(LoadRequest("bulk", str(tmp_path / "a.ndjson")))
    assert job.result["rows"] == 2
    rows = services.query.execute("SELECT n, colour FROM bulk ORDER BY n").table.to_pylist()
    assert rows == [{"n": 1, "colour": "red"}, {"n": 2, "colour": None}]
    assert len(services.catalog.live_extents("bulk")) == 1  # the first pass's were deleted


def test_a_bad_line_fails_the_load_naming_it_and_commits_nothing(spark, services, tmp_path) -> None:
    lines = [json.dumps({"n": n}) for n in range(10)]
    lines[6] = '{"n": "seven"}'
    (tmp_path / "bad.ndjson").write_text("\n".join(lines) + "\n")
    services.query.execute("CREATE TABLE bulk (n long)")
    with pytest.raises(IngestError, match=r"bad.ndjson: line 7, field 'n': expected long"):
        services.jobs.load(LoadRequest("bulk", str(tmp_path / "bad.ndjson")))
    assert services.catalog.get_table("bulk").current_snapshot_id is None


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (
            json.dumps({f"K-{i}": i for i in range(10_001)}),
            "line 2001 has 10001 keys, over max_keys_per_row=10000",
        ),
        (
            '{"n": 1, "deep": ' + "[" * 101 + "]" * 101 + "}",
            "line 2001: JSON nested deeper than max_nesting_depth=100",
        ),
    ],
    ids=["keys", "depth"],
)
def test_rows_past_the_shape_limits_fail_the_load_as_over_rest(
    spark, services, tmp_path, small_splits, bad, said
) -> None:
    """The REST path's keys-per-row and nesting limits hold for loads too (issue 25)."""
    lines = [json.dumps({"n": n, "pad": "x" * 40}) for n in range(3_000)]
    lines[2_000] = bad  # past the first split
    path = tmp_path / "shape.ndjson"
    path.write_text("\n".join(lines) + "\n")
    services.query.execute("CREATE TABLE bulk (n long)")
    with pytest.raises(IngestError, match=f"shape.ndjson: {re.escape(said)}$"):
        services.jobs.load(LoadRequest("bulk", str(path)))
    assert services.catalog.get_table("bulk").current_snapshot_id is None


def test_the_jobs_api_runs_a_load_and_reports_progress(spark, client, inputs) -> None:
    started = client.post(
        "/v1/jobs/load", json={"table": "bulk", "source": str(inputs / "parquet")}
    )
    assert started.status_code == 202, started.get_json()
    job_id = started.get_json()["id"]
    deadline = time.monotonic() + 120
    while (job := client.get(f"/v1/jobs/{job_id}").get_json())["state"] == "running":
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    assert job["state"] == "succeeded", job
    assert job["result"]["rows"] == ROWS
    progress = job["progress"]
    assert progress["files_total"] == progress["files_done"] == FILES
    assert (progress["rows_done"], progress["bytes_done"]) == (ROWS, progress["bytes_total"])
    assert progress["bytes_per_second"] > 0 and progress["rows_per_second"] > 0
    assert [j["id"] for j in client.get("/v1/jobs").get_json()["jobs"]] == [job_id]
    bad = client.post("/v1/jobs/load", json={"table": "bulk"})
    assert bad.status_code == 400 and "source" in bad.get_json()["message"]
    missing = client.post("/v1/jobs/load", json={"table": "t", "source": "/nowhere/*.csv"})
    job_id = missing.get_json()["id"]
    while (job := client.get(f"/v1/jobs/{job_id}").get_json())["state"] == "running":
        time.sleep(0.1)
    assert job["state"] == "failed" and "no files match" in job["error"]


def test_kill_9_mid_load_leaves_nothing_visible_and_gc_clears_it(
    services, catalog_url, tmp_path
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(8):
        with (big / f"part-{i}.ndjson").open("w") as f:
            f.writelines(json.dumps(row(n)) + "\n" for n in range(i * 50_000, (i + 1) * 50_000))
    services.query.execute(f"CREATE TABLE bulk {DDL}")
    objects = tmp_path / "objects"
    log = (tmp_path / "load.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kyma", "load", "bulk", str(big)],
        env={
            **os.environ,
            "KYMA_HOME": str(tmp_path / "home"),
            "KYMA_CATALOG_URL": catalog_url,
            "KYMA_OBJECT_STORE": f"file://{objects}",
            "KYMA_SPARK_MASTER": "local[2]",
        },
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the Spark JVM and its Python workers die with it
    )
    try:
        deadline = time.monotonic() + 120
        # until a task wrote an extent
        while not list((objects / "tables").rglob("*.parquet")) and proc.poll() is None:
            assert time.monotonic() < deadline, "no extent written in time"
            time.sleep(0.05)
        assert proc.poll() is None, (tmp_path / "load.log").read_text()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        log.close()
    info = services.catalog.get_table("bulk")
    assert info.current_snapshot_id is None  # nothing visible
    assert services.query.execute("SELECT count(*) AS n FROM bulk").table.to_pylist() == [{"n": 0}]
    time.sleep(1)  # tasks that were writing are gone; their files stay until GC
    written = list((objects / "tables").rglob("*.parquet"))
    assert written
    deleted = collect_orphans(services.catalog, services.store, timedelta(0))
    assert len(deleted) == len(written)
    assert list((objects / "tables").rglob("*.parquet")) == []


def test_a_file_drop_hands_large_files_to_spark(spark, client, services, tmp_path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "big.ndjson").write_text("".join(json.dumps(row(n)) + "\n" for n in range(5000)))
    (folder / "small.ndjson").write_text(json.dumps(row(5000)) + "\n")
    services.query.execute(f"CREATE TABLE events {DDL}")
    services.sources.start()
    body = {
        "name": "drops",
        "type": "filedrop",
        "table": "events",
        "path": f"file://{folder}",
        "format": "ndjson",
        "poll_ms": 50,
        "spark_min_bytes": 10_000,
    }
    assert client.post("/v1/sources", json=body).status_code == 201
    deadline = time.monotonic() + 120
    while (status := client.get("/v1/sources/drops/status").get_json())["files_ingested"] < 2:
        assert time.monotonic() < deadline and not status["files_failed"], status
        time.sleep(0.1)
    assert {f["key"]: f["rows"] for f in status["files"]} == {
        "big.ndjson": 5000,
        "small.ndjson": 1,
    }
    sources = sorted(s.summary["source"] for s in services.catalog.snapshots("events"))
    assert sources == ["filedrop:drops", "filedrop:drops:spark"]
    count = services.query.execute("SELECT count(*) AS c, count(DISTINCT n) AS d FROM events")
    assert count.table.to_pylist() == [{"c": 5001, "d": 5001}]


@pytest.fixture
def small_splits(monkeypatch) -> int:  # type: ignore[no-untyped-def]
    """NDJSON splits of 64 KiB, progress every 50 ms: a small file is many tasks."""
    monkeypatch.setattr(_splits, "SPLIT_BYTES", 64 << 10)
    monkeypatch.setattr(_job, "PROGRESS_SECONDS", 0.05)
    return 64 << 10


def test_progress_of_a_multi_split_file_moves_to_its_totals(
    spark, services, tmp_path, small_splits
) -> None:
    path = tmp_path / "many.ndjson"
    path.write_text("".join(json.dumps(row(n)) + "\n" for n in range(20_000)))
    assert path.stat().st_size > 10 * small_splits
    services.query.execute(f"CREATE TABLE bulk {DDL}")
    seen: list[dict] = []
    job = services.jobs.load(
        LoadRequest("bulk", str(path)), follow=lambda p: seen.append(p.to_json())
    )
    assert job.state == "succeeded"
    reading = [p["rows_done"] for p in seen if p["phase"] == "reading" and p["rows_done"]]
    assert len(set(reading)) >= 2, seen  # it moved while Spark worked
    assert reading == sorted(reading) and reading[-1] == 20_000
    final = job.progress.to_json()
    assert (final["phase"], final["rows_done"]) == ("done", 20_000)
    assert final["bytes_done"] == final["bytes_total"] == path.stat().st_size


def test_tasks_report_progress_to_the_driver_by_datagram() -> None:
    channel = ProgressChannel("127.0.0.1")
    reporter = SplitReporter(channel.address)
    try:
        for split, rows, size in ((0, 10, 100), (1, 5, 50), (0, 20, 200)):
            reporter.send(split, rows, size)
        deadline = time.monotonic() + 10
        while channel.totals() != (25, 250):  # split 0's latest report replaced its first
            assert time.monotonic() < deadline, channel.totals()
            time.sleep(0.01)
    finally:
        reporter.close()
        channel.close()
    SplitReporter(None).send(0, 1, 1)  # no channel: nothing sent, nothing raised


@pytest.mark.parametrize("hashed", [True, False], ids=["load", "file-drop"])
def test_a_bad_line_deep_in_a_file_names_the_files_own_line(
    spark, services, tmp_path, small_splits, hashed
) -> None:
    lines = [json.dumps({"n": n, "pad": "x" * 40}) for n in range(10_000)]
    lines[7_000] = '{"n": "seven thousand"}'
    path = tmp_path / "deep.ndjson"
    path.write_text("\n".join(lines) + "\n")
    assert len("\n".join(lines[:7_000])) > 5 * small_splits  # well past the first split
    services.query.execute("CREATE TABLE bulk (n long)")
    identity = None if hashed else LoadIdentity("drop:deep", "0" * 64, "filedrop:x")
    with pytest.raises(IngestError, match=r"deep.ndjson: line 7001, field 'n': expected long"):
        services.jobs.load(LoadRequest("bulk", str(path)), identity=identity)
    assert services.catalog.get_table("bulk").current_snapshot_id is None


def run_cli_load(tmp_path: Path, catalog_url: str, source: Path, master: str):  # type: ignore[no-untyped-def]
    """``kyma load bulk <source>`` in its own process: its exit code and stderr's lines."""
    done = subprocess.run(
        [sys.executable, "-m", "kyma", "load", "bulk", str(source)],
        env={
            **os.environ,
            "KYMA_HOME": str(tmp_path / "home"),
            "KYMA_CATALOG_URL": catalog_url,
            "KYMA_OBJECT_STORE": f"file://{tmp_path / 'objects'}",
            "KYMA_SPARK_MASTER": master,
        },
        capture_output=True,
        timeout=180,
    )
    stderr = done.stderr.decode()
    shown = [line for line in stderr.split("\n") if line.strip()]  # \r: the same line
    assert len(shown) <= 3, stderr  # the progress line and the error
    assert not [line for line in shown if "at org.apache" in line or "Traceback" in line]
    return done.returncode, stderr


def test_the_cli_says_a_bad_line_in_one_line_without_spark_noise(
    services, catalog_url, tmp_path
) -> None:
    lines = [json.dumps({"n": n}) for n in range(100)]
    lines[41] = '{"n": "forty-two"}'
    (tmp_path / "bad.ndjson").write_text("\n".join(lines) + "\n")
    services.query.execute("CREATE TABLE bulk (n long)")
    code, stderr = run_cli_load(tmp_path, catalog_url, tmp_path / "bad.ndjson", "local[1]")
    assert code == 1 and "bad.ndjson: line 42, field 'n': expected long" in stderr
    assert "Exception" in (tmp_path / "home" / "spark.log").read_text()  # Spark's words: here
    code, stderr = run_cli_load(tmp_path, catalog_url, tmp_path / "bad.ndjson", "nowhere://x")
    assert code == 1 and "Spark did not start on nowhere://x: " in stderr, stderr


def test_a_failed_spark_job_is_said_by_the_tasks_python_error() -> None:
    text = (
        "An error occurred while calling o81.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: ...\n"
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "/x/worker.py", line 1, in main\n'
        "    process()\n"
        "PermissionError: [Errno 13] Permission denied: '/objects/t'\n"
        "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(x.scala:1)\n"
    )
    said = str(_job._task_error(RuntimeError(text)))
    assert said == (
        "the load's Spark job failed: PermissionError: [Errno 13] Permission denied: '/objects/t'"
    )
    assert str(_job._task_error(RuntimeError("boom\nat x"))) == "the load's Spark job failed: boom"
