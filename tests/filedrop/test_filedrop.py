"""File-drop sources: a local folder and a bucket of moto's S3, NDJSON, CSV and Parquet."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
import uuid
from pathlib import Path

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
from http_helpers import sql

WAIT = 30.0


def create(client, folder: Path, fmt: str = "ndjson", **extra) -> None:  # type: ignore[no-untyped-def]
    body = {
        "name": "drops",
        "type": "filedrop",
        "table": "events",
        "path": f"file://{folder}",
        "format": fmt,
        "poll_ms": 50,
        **extra,
    }
    answer = client.post("/v1/sources", json=body)
    assert answer.status_code == 201, answer.get_json()


def status(client) -> dict:  # type: ignore[no-untyped-def]
    return client.get("/v1/sources/drops/status").get_json()


def wait_for_files(client, done: int) -> dict:  # type: ignore[no-untyped-def]
    """The status once ``done`` files are ingested or failed (bounded)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        answer = status(client)
        if answer["files_ingested"] + answer["files_failed"] >= done:
            return answer
        time.sleep(0.05)
    raise AssertionError(f"not {done} files after {WAIT}s: {status(client)}")


def settled(folder: Path) -> None:
    """Date the folder's files a minute back, so the first scan takes them all (a file
    modified within ``poll_ms`` waits for the next scan)."""
    past = time.time() - 60
    for path in folder.iterdir():
        os.utime(path, (past, past))


def ndjson(rows: range) -> bytes:
    return b"".join(json.dumps({"n": n, "host": f"h{n % 3}"}).encode() + b"\n" for n in rows)


def test_a_folder_is_ingested_once_and_a_changed_file_again(client, services, tmp_path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "a.ndjson").write_bytes(ndjson(range(0, 100)))
    (folder / "b.ndjson.gz").write_bytes(gzip.compress(ndjson(range(100, 250))))
    (folder / ".hidden").write_bytes(b"not a drop")
    (folder / "c.ndjson.tmp").write_bytes(b"still being written")
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder)
    answer = wait_for_files(client, 2)
    assert (answer["files_ingested"], answer["files_failed"]) == (2, 0)
    assert {f["key"]: f["rows"] for f in answer["files"]} == {"a.ndjson": 100, "b.ndjson.gz": 150}
    assert sql(client, "SELECT count(*), count(DISTINCT n), min(n), max(n) FROM events")[
        "rows"
    ] == [[250, 250, 0, 249]]
    assert "host" in [r[0] for r in sql(client, "DESCRIBE events")["rows"]]  # evolved

    time.sleep(0.3)  # several re-scans: nothing twice
    (folder / "copy.ndjson").write_bytes(ndjson(range(0, 100)))  # same bytes, another name
    wait_for_files(client, 3)
    (folder / "a.ndjson").write_bytes(ndjson(range(0, 100)) + b'{"n": 1000}\n')  # one more line
    deadline = time.monotonic() + WAIT
    while sql(client, "SELECT count(*) FROM events")["rows"][0][0] < 351:
        assert time.monotonic() < deadline, status(client)
        time.sleep(0.05)
    time.sleep(0.3)
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[351]]
    files = {f["key"]: f for f in status(client)["files"]}
    assert files["copy.ndjson"]["rows"] == 0  # a replay of a.ndjson's first bytes
    assert files["a.ndjson"]["rows"] == 101


def test_a_bad_file_is_marked_failed_with_its_line_and_the_others_go_on(
    client, services, tmp_path
) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    sql(client, "CREATE TABLE events (n long)")
    (folder / "good.ndjson").write_bytes(ndjson(range(10)))
    (folder / "bad.ndjson").write_bytes(ndjson(range(5)) + b'{"n": "six"}\n' + ndjson(range(7, 9)))
    services.sources.start()
    create(client, folder)
    answer = wait_for_files(client, 2)
    bad = next(f for f in answer["files"] if f["key"] == "bad.ndjson")
    assert bad["state"] == "failed"
    assert "line 6, field 'n'" in bad["error"] and "expected long" in bad["error"]
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[10]]  # nothing of bad
    time.sleep(0.3)
    assert status(client)["files_failed"] == 1  # left alone until it changes
    (folder / "bad.ndjson").write_bytes(ndjson(range(100, 103)))
    deadline = time.monotonic() + WAIT
    while status(client)["files_failed"]:
        assert time.monotonic() < deadline, status(client)
        time.sleep(0.05)
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[13]]


def test_csv_columns_convert_to_the_table_types(client, services, tmp_path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    sql(client, "CREATE TABLE events (n long, ok bool, at timestamp, score real)")
    (folder / "x.csv").write_text(
        "n,ok,at,score,city\n1,true,2026-01-02T03:04:05Z,1.5,Oslo\n2,false,2026-01-02 03:04:06,,\n"
    )
    services.sources.start()
    create(client, folder, "csv")
    assert wait_for_files(client, 1)["files_ingested"] == 1
    rows = sql(client, "SELECT n, ok, CAST(at AS VARCHAR), score, city FROM events ORDER BY n")
    assert rows["rows"] == [
        [1, True, "2026-01-02T03:04:05Z", 1.5, "Oslo"],
        [2, False, "2026-01-02T03:04:06Z", None, None],
    ]
    (folder / "y.csv").write_text("n,ok\n3,true\nfour,false\n")
    answer = wait_for_files(client, 2)
    bad = next(f for f in answer["files"] if f["key"] == "y.csv")
    assert "line 3, field 'n': expected long, got 'four'" in bad["error"]


def test_parquet_keeps_its_types_and_unknown_columns_become_strings(
    client, services, tmp_path
) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    sql(client, "CREATE TABLE events (n long, score real)")
    table = pa.table({"n": pa.array([1, 2], pa.int32()), "score": [0.5, None], "code": [7, 8]})
    pq.write_table(table, folder / "x.parquet")
    services.sources.start()
    create(client, folder, "parquet")
    assert wait_for_files(client, 1)["files_ingested"] == 1
    rows = sql(client, "SELECT n, score, code FROM events ORDER BY n")["rows"]
    assert rows == [[1, 0.5, "7"], [2, None, "8"]]


def test_a_bucket_prefix_is_watched_and_rescans_ingest_nothing_twice(
    client, services, s3_endpoint, monkeypatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    bucket = f"drop-{uuid.uuid4().hex[:8]}"
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="in/a.ndjson", Body=ndjson(range(50)))
    s3.put_object(Bucket=bucket, Key="elsewhere/b.ndjson", Body=ndjson(range(50, 60)))
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    body = {
        "name": "drops",
        "type": "filedrop",
        "table": "events",
        "path": f"s3://{bucket}/in",
        "format": "ndjson",
        "poll_ms": 50,
        "s3_endpoint_url": s3_endpoint,
    }
    assert client.post("/v1/sources", json=body).status_code == 201
    assert wait_for_files(client, 1)["files"][0]["key"] == "a.ndjson"
    s3.put_object(Bucket=bucket, Key="in/c.ndjson", Body=ndjson(range(60, 70)))
    wait_for_files(client, 2)
    time.sleep(0.3)
    assert sql(client, "SELECT count(*), count(DISTINCT n) FROM events")["rows"] == [[60, 60]]
    s3.put_object(Bucket=bucket, Key="in/c.ndjson", Body=ndjson(range(60, 70)) + b'{"n": 99}\n')
    deadline = time.monotonic() + WAIT
    while sql(client, "SELECT count(*) FROM events")["rows"][0][0] < 71:
        assert time.monotonic() < deadline, status(client)
        time.sleep(0.05)


def test_sources_in_sql_and_bad_definitions(client, tmp_path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    statement = (
        f"CREATE SOURCE drops TYPE filedrop WITH (table = 'events', path = 'file://{folder}',"
        " format = 'csv', poll_ms = 500)"
    )
    assert sql(client, statement)["status"] == "CREATE SOURCE"
    assert sql(client, "SHOW SOURCES")["rows"] == [["drops", "filedrop", "events", False]]
    bad = client.post(
        "/v1/sources",
        json={"name": "x", "type": "filedrop", "table": "t", "path": "/data", "format": "csv"},
    )
    assert bad.status_code == 400
    assert "path: expected file:///folder or s3://bucket/prefix" in bad.get_json()["message"]
    bad = sql(client, "CREATE SOURCE y TYPE filedrop WITH (table = 't', path = 'file:///d')", 400)
    assert "format: expected one of ['ndjson', 'csv', 'parquet']" in bad["message"]
    bad = client.post(
        "/v1/sources",
        json={
            "name": "z",
            "type": "filedrop",
            "table": "t",
            "path": f"file://{folder}",
            "format": "csv",
            "group_bytes": -1,
        },
    )
    assert bad.status_code == 400
    assert (
        "group_bytes: expected an integer from 0 (a commit per file)" in bad.get_json()["message"]
    )


def test_a_large_file_streams_in_bounded_chunks(client, services, tmp_path, monkeypatch) -> None:
    """A file many chunks long commits as one snapshot, Arrow holding a few chunks at a time."""
    from kyma.ingest.filedrop import _ndjson

    chunk = 256 << 10
    folder = tmp_path / "drop"
    folder.mkdir()
    rows = 400_000
    (folder / "big.ndjson").write_bytes(ndjson(range(rows)))
    sql(client, "CREATE TABLE events (n long)")
    size = (folder / "big.ndjson").stat().st_size
    peak = 0
    write_chunk = _ndjson._write_chunk

    def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal peak
        done = write_chunk(*args, **kwargs)
        peak = max(peak, pa.total_allocated_bytes())
        return done

    monkeypatch.setattr(_ndjson, "_write_chunk", watched)
    start = pa.total_allocated_bytes()
    services.sources.start()
    create(client, folder, chunk_bytes=chunk)
    answer = wait_for_files(client, 1)
    assert answer["files_ingested"] == 1 and answer["files"][0]["rows"] == rows
    assert sql(client, "SELECT count(*), count(DISTINCT n) FROM events")["rows"] == [[rows, rows]]
    table = client.get("/v1/tables/events").get_json()
    assert table["extents"] >= size // chunk  # one snapshot of one extent per chunk
    assert len(services.catalog.snapshots("events")) == 1
    assert peak - start < size / 4, (peak - start, size)


def test_a_small_gz_that_holds_much_leaves_its_pack_for_streaming(
    client, services, tmp_path
) -> None:
    """A pack reads each file whole, but never past a chunk: a small .gz holding more goes
    file by file, streamed in chunks, and the pack's other file with it."""
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "a.ndjson.gz").write_bytes(gzip.compress(ndjson(range(20_000))))  # ~700 KiB
    (folder / "b.ndjson").write_bytes(ndjson(range(20_000, 20_010)))
    assert (folder / "a.ndjson.gz").stat().st_size < 64 << 10
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder, chunk_bytes=64 << 10, group_bytes=64 << 10)
    answer = wait_for_files(client, 2)
    assert {f["key"]: f["rows"] for f in answer["files"]} == {"a.ndjson.gz": 20_000, "b.ndjson": 10}
    assert len(services.catalog.snapshots("events")) == 2  # one a file, not one pack
    assert sql(client, "SELECT count(*), count(DISTINCT n) FROM events")["rows"] == [
        [20_010, 20_010]
    ]


def test_a_missing_folder_is_a_400_naming_it_and_nothing_is_created(client, tmp_path) -> None:
    missing = tmp_path / "not" / "there"
    body = {
        "name": "drops",
        "type": "filedrop",
        "table": "events",
        "path": f"file://{missing}",
        "format": "ndjson",
    }
    answer = client.post("/v1/sources", json=body)
    assert answer.status_code == 400, answer.get_json()
    message = answer.get_json()["message"]
    assert message.startswith("path: ") and repr(str(missing)) in message, message
    assert not (tmp_path / "not").exists()
    assert client.get("/v1/sources").get_json()["sources"] == []
    bad = sql(
        client,
        f"CREATE SOURCE drops TYPE filedrop WITH (table = 'events', path = 'file://{missing}',"
        " format = 'csv')",
        400,
    )
    assert str(missing) in bad["message"] and not (tmp_path / "not").exists()


def test_a_folder_removed_under_a_running_source_is_degraded(client, services, tmp_path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    services.sources.start()
    create(client, folder)
    assert status(client)["state"] == "running"
    folder.rmdir()
    deadline = time.monotonic() + WAIT
    while status(client)["state"] != "degraded" and time.monotonic() < deadline:
        time.sleep(0.05)
    answer = status(client)
    assert answer["state"] == "degraded" and str(folder) in answer["degraded_reason"], answer
    assert not folder.exists()  # the source never makes it again
    folder.mkdir()
    while status(client)["state"] != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status(client)["state"] == "running"
    assert status(client)["degraded_reason"] is None


def test_several_files_are_in_flight_at_once_and_no_more(client, services, tmp_path) -> None:
    """Three files whose reads wait (named pipes nobody writes to yet) fill the three slots:
    a fourth waits for one; when one pipe ends, it goes in while the other two still wait."""
    folder = tmp_path / "drop"
    folder.mkdir()
    pipes = [folder / name for name in ("a.ndjson", "b.ndjson", "c.ndjson")]
    for pipe in pipes:
        os.mkfifo(pipe)
    (folder / "d.ndjson").write_bytes(ndjson(range(0, 20)))
    settled(folder)
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder, parallel_files=3, group_bytes=0)  # pipes are 0 bytes: no packs
    try:
        deadline = time.monotonic() + WAIT
        while status(client)["lag"] != 4:
            assert time.monotonic() < deadline, status(client)
            time.sleep(0.05)
        time.sleep(0.5)  # d would be in by now if a fourth file could start
        assert sql(client, "SELECT count(*) FROM events")["rows"] == [[0]]
        release(pipes[0], client)  # a slot frees: d goes in while b and c still wait
        deadline = time.monotonic() + WAIT
        while sql(client, "SELECT count(*) FROM events")["rows"] != [[20]]:
            assert time.monotonic() < deadline, status(client)
            time.sleep(0.05)
        answer = status(client)
        assert [f["key"] for f in answer["files"]] == ["a.ndjson", "d.ndjson"]
        assert answer["lag"] == 2 and answer["lag_unit"] == "files"
        assert answer["rows_total"] == 20 and answer["last_commit_at"] <= time.time()
        metrics = client.get("/metrics").get_data(as_text=True)
        assert 'kyma_source_rows_total{source="drops",type="filedrop"} 20.0' in metrics
        assert 'kyma_source_lag{source="drops",type="filedrop",unit="files"} 2.0' in metrics
        assert 'kyma_source_last_commit_timestamp_seconds{source="drops"' in metrics
    finally:
        for pipe in pipes:
            release(pipe, client)
    answer = wait_for_files(client, 4)
    assert [f["key"] for f in answer["files"]] == ["a.ndjson", "b.ndjson", "c.ndjson", "d.ndjson"]
    assert answer["lag"] == 0


def release(fifo: Path, client) -> None:  # type: ignore[no-untyped-def]
    """End a named pipe's reads (open it for writing and close it) until it is recorded."""
    deadline = time.monotonic() + WAIT
    while fifo.name not in {f["key"] for f in status(client)["files"]}:
        assert time.monotonic() < deadline, status(client)
        with contextlib.suppress(OSError):  # no reader at this moment
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        time.sleep(0.02)


def test_small_files_commit_together_each_once_and_a_bad_one_alone(
    client, services, tmp_path
) -> None:
    """Six small files: one snapshot holds the four good distinct ones, each recorded with
    its rows; a copy of one in the same scan is a replay; the bad one makes the pack go file
    by file, so it alone fails. A copy dropped later is a replay too."""
    folder = tmp_path / "drop"
    folder.mkdir()
    for i in range(4):
        (folder / f"f{i}.ndjson").write_bytes(ndjson(range(i * 10, i * 10 + 10)))
    (folder / "f2.ndjson").write_bytes(ndjson(range(20, 30)).rstrip(b"\n"))  # no last newline
    (folder / "f3.ndjson").write_bytes(ndjson(range(30, 35)) + b"\n  \n" + ndjson(range(35, 40)))
    (folder / "z1-copy.ndjson").write_bytes(ndjson(range(10, 20)))
    settled(folder)
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder)
    answer = wait_for_files(client, 5)
    files = {f["key"]: f for f in answer["files"]}
    assert {k: f["rows"] for k, f in files.items()} == {
        "f0.ndjson": 10,
        "f1.ndjson": 10,
        "f2.ndjson": 10,
        "f3.ndjson": 10,
        "z1-copy.ndjson": 0,
    }
    assert len({f["snapshot_id"] for f in files.values()}) == 1  # one commit for all
    assert len(services.catalog.snapshots("events")) == 1
    assert len(services.catalog.live_extents("events")) == 1  # the files' rows as one extent
    assert sql(client, "SELECT count(*), count(DISTINCT n) FROM events")["rows"] == [[40, 40]]

    (folder / "g0.ndjson").write_bytes(ndjson(range(100, 105)))
    (folder / "g1.ndjson").write_bytes(b'{"n": "six"}\n')
    (folder / "g2.ndjson").write_bytes(ndjson(range(0, 10)))  # f0's bytes: a replay
    answer = wait_for_files(client, 8)
    files = {f["key"]: f for f in answer["files"]}
    assert files["g1.ndjson"]["state"] == "failed"
    assert "line 1, field 'n'" in files["g1.ndjson"]["error"]
    assert (files["g0.ndjson"]["rows"], files["g2.ndjson"]["rows"]) == (5, 0)
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[45]]


def test_a_bad_line_deep_in_a_chunked_file_names_its_line_in_the_file(
    client, services, tmp_path
) -> None:
    """A file of many chunks with one bad line near its end: the error names the line in
    the file (not in its chunk), nothing of the file lands and no extent is left behind;
    the file beside it goes in."""
    folder = tmp_path / "drop"
    folder.mkdir()
    lines = ndjson(range(3000)).splitlines(keepends=True)
    lines[2716] = b'{"n": "oops", "host": "h1"}\n'  # line 2717 of the file
    (folder / "big.ndjson").write_bytes(b"".join(lines))
    (folder / "good.ndjson").write_bytes(ndjson(range(5000, 5010)))
    assert (folder / "big.ndjson").stat().st_size > 15 * 4096  # many chunks
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder, chunk_bytes=4096, group_bytes=0)
    answer = wait_for_files(client, 2)
    files = {f["key"]: f for f in answer["files"]}
    assert files["big.ndjson"]["state"] == "failed"
    assert "line 2717, field 'n'" in files["big.ndjson"]["error"], files["big.ndjson"]
    assert (files["good.ndjson"]["state"], files["good.ndjson"]["rows"]) == ("ingested", 10)
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[10]]
    extents = [p for p in (tmp_path / "objects").rglob("*") if p.is_file()]
    assert len(extents) == len(services.catalog.live_extents("events")), extents


def test_bytes_already_in_another_table_fail_and_their_pack_goes_file_by_file(
    client, services, tmp_path
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    (first / "a.ndjson").write_bytes(ndjson(range(10)))
    (second / "same.ndjson").write_bytes(ndjson(range(10)))  # a.ndjson's bytes
    (second / "other.ndjson").write_bytes(ndjson(range(10, 13)))
    sql(client, "CREATE TABLE events (n long)")
    sql(client, "CREATE TABLE others (n long)")
    services.sources.start()
    create(client, first)
    wait_for_files(client, 1)
    body = {"name": "more", "type": "filedrop", "table": "others", "format": "ndjson"}
    answer = client.post("/v1/sources", json={**body, "path": f"file://{second}", "poll_ms": 50})
    assert answer.status_code == 201, answer.get_json()
    deadline = time.monotonic() + WAIT
    while len(files := client.get("/v1/sources/more/status").get_json()["files"]) < 2:
        assert time.monotonic() < deadline, files
        time.sleep(0.05)
    by_key = {f["key"]: f for f in files}
    assert by_key["same.ndjson"]["state"] == "failed"
    assert "table 'events'" in by_key["same.ndjson"]["error"], by_key["same.ndjson"]
    assert (by_key["other.ndjson"]["state"], by_key["other.ndjson"]["rows"]) == ("ingested", 3)
    assert sql(client, "SELECT count(*) FROM others")["rows"] == [[3]]


def test_a_file_is_taken_once_left_alone_for_a_poll_interval(services, tmp_path) -> None:
    """Settled means unchanged for ``poll_ms``: by modification time, or against a listing
    that old; a scan right after another (as after a scan that took files) does not count
    the listing it just made."""
    from kyma.engine.storage.local import LocalStore
    from kyma.ingest.filedrop import FileDropWorker, parse_filedrop_spec

    folder = tmp_path / "drop"
    folder.mkdir()
    spec = parse_filedrop_spec(
        {"name": "w", "type": "filedrop", "table": "events", "path": f"file://{folder}"}
        | {"format": "ndjson", "poll_ms": 300}
    )
    sources = services.sources
    worker = FileDropWorker(
        spec, sources.catalog, sources.store.files, sources.write_path, LocalStore(folder)
    )
    (folder / "a.ndjson").write_bytes(ndjson(range(3)))
    assert worker._due() == []  # just written
    assert worker._due() == []  # the listing of a moment ago proves nothing
    time.sleep(0.35)
    with (folder / "b.ndjson").open("wb") as growing:
        growing.write(ndjson(range(3)))
        growing.flush()
        assert [o.key for o in worker._due()] == ["a.ndjson"]  # a poll old by its mtime
        time.sleep(0.2)
        growing.write(ndjson(range(3, 6)))  # still being written
        growing.flush()
        time.sleep(0.15)
        assert [o.key for o in worker._due()] == ["a.ndjson"]
    time.sleep(0.35)
    assert [o.key for o in worker._due()] == ["a.ndjson", "b.ndjson"]


def test_files_without_rows_are_recorded_once_with_none(client, services, tmp_path) -> None:
    """Empty and blank files (alone, packed, or a chunk of blank lines in a large file)
    commit no rows and are recorded as ingested: the write path refuses an empty body."""
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "a-empty.ndjson").write_bytes(b"")
    (folder / "b-blank.ndjson").write_bytes(b"\n  \n\t\n")
    blank_run = b"\n" * 5000
    (folder / "c-big.ndjson").write_bytes(ndjson(range(3)) + blank_run + ndjson(range(3, 5)))
    settled(folder)
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder, chunk_bytes=1024, group_bytes=2048)  # a and b packed, c chunked
    answer = wait_for_files(client, 3)
    assert {f["key"]: (f["state"], f["rows"]) for f in answer["files"]} == {
        "a-empty.ndjson": ("ingested", 0),
        "b-blank.ndjson": ("ingested", 0),
        "c-big.ndjson": ("ingested", 5),
    }, answer
    assert sql(client, "SELECT count(*) FROM events")["rows"] == [[5]]


def test_a_scan_that_took_files_is_followed_by_another_at_once(client, services, tmp_path) -> None:
    """A file that arrives while a scan runs goes in when that scan ends, not a poll later
    (``poll_ms`` is 10 s here; the file is in well before)."""
    folder = tmp_path / "drop"
    folder.mkdir()
    os.mkfifo(folder / "a.ndjson")  # its read waits: the scan stays busy until released
    settled(folder)
    sql(client, "CREATE TABLE events (n long)")
    services.sources.start()
    create(client, folder, poll_ms=10_000, group_bytes=0)
    try:
        deadline = time.monotonic() + WAIT
        while status(client)["lag"] != 1:
            assert time.monotonic() < deadline, status(client)
            time.sleep(0.05)
        (folder / "b.ndjson").write_bytes(ndjson(range(7)))
        past = time.time() - 60  # b was closed long enough ago
        os.utime(folder / "b.ndjson", (past, past))
    finally:
        release(folder / "a.ndjson", client)
    deadline = time.monotonic() + 5  # half the poll interval
    while sql(client, "SELECT count(*) FROM events")["rows"] != [[7]]:
        assert time.monotonic() < deadline, status(client)
        time.sleep(0.05)
