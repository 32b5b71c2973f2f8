"""kill -9 of ``kyma serve`` in the middle of a chunked file, and again just before its
commit: after the restarts the file is in the table exactly once, and a copy of it is a
replay."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from serve_helpers import Serve, postmaster_pid

ROWS = 30_000
WAIT = 60.0


def files_done(serve: Serve, count: int) -> dict:
    """The source's status once ``count`` files are ingested or failed (bounded)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = serve.get("/v1/sources/drops/status")[1]
        if status["files_ingested"] + status["files_failed"] >= count:
            return status
        time.sleep(0.05)
    raise AssertionError(f"not {count} files after {WAIT}s: {status}")


def test_kill_9_mid_file_and_before_its_commit_duplicates_nothing() -> None:
    root = Path(tempfile.mkdtemp(prefix="kyma-drop-kill-", dir="/tmp"))
    home, folder = root / "home", root / "drop"
    folder.mkdir()
    body = b"".join(json.dumps({"n": n, "pad": "x" * 20}).encode() + b"\n" for n in range(ROWS))
    (folder / "big.ndjson").write_bytes(body)
    assert len(body) > 12 * (64 << 10)  # a dozen chunks and more
    try:
        first = Serve(home, KYMA_CRASH_AT="filedrop.chunk_written:3")
        first.sql("CREATE TABLE events (n long, pad string)")
        source = {
            "name": "drops",
            "type": "filedrop",
            "table": "events",
            "path": f"file://{folder}",
            "format": "ndjson",
            "poll_ms": 50,
            "chunk_bytes": 64 << 10,
        }
        assert first.post("/v1/sources", source)[0] == 201
        assert first.proc.wait(timeout=WAIT) == -signal.SIGKILL  # at its third chunk

        second = Serve(home, KYMA_CRASH_AT="write.extents_written:1")  # every chunk written
        assert second.proc.wait(timeout=WAIT) == -signal.SIGKILL

        third = Serve(home)
        status = files_done(third, 1)
        assert [(f["key"], f["state"], f["rows"]) for f in status["files"]] == [
            ("big.ndjson", "ingested", ROWS)
        ]
        count = "SELECT count(*) AS n, count(DISTINCT n) AS d FROM events"
        assert third.sql(count)["rows"] == [[ROWS, ROWS]]
        (folder / "copy.ndjson").write_bytes(body)
        status = files_done(third, 2)
        copy = next(f for f in status["files"] if f["key"] == "copy.ndjson")
        assert (copy["state"], copy["rows"]) == ("ingested", 0)  # a replay
        assert third.sql(count)["rows"] == [[ROWS, ROWS]]
        assert third.stop() == 0
    finally:
        pid = postmaster_pid(home)
        if pid:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
