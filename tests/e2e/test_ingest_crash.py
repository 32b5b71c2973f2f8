"""kill -9 of ``kyma serve`` in the middle of ingest loses nothing and duplicates nothing.

A client sends keyed requests while the server is killed; after a restart it resends every
request with the same key. Each request must be in the table exactly once, whichever side
of the kill its commit fell on.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from test_serve import Serve, postmaster_pid

REQUESTS = 40
ROWS = 500


def body(i: int) -> bytes:
    return "\n".join(json.dumps({"req": i, "row": r}) for r in range(ROWS)).encode()


def send(url: str, i: int) -> dict:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("POST", "/v1/ingest/events", body(i), {"X-Idempotency-Key": f"batch-{i}"})
        answer = conn.getresponse()
        payload = json.loads(answer.read())
    finally:
        conn.close()
    assert answer.status == 200, payload
    return payload


def test_kill_9_mid_ingest_then_resend_everything() -> None:
    home = Path(tempfile.mkdtemp(prefix="kyma-crash-", dir="/tmp")) / "home"
    try:
        first = Serve(home)
        first.sql("CREATE TABLE events (req long, row long)")
        sent: list[int] = []

        def client() -> None:
            for i in range(REQUESTS):
                try:
                    send(first.url, i)
                except (OSError, http.client.HTTPException):
                    return  # the server died under us
                sent.append(i)

        worker = threading.Thread(target=client)
        worker.start()
        deadline = time.monotonic() + 60
        while len(sent) < REQUESTS // 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        first.proc.send_signal(signal.SIGKILL)
        worker.join(timeout=60)
        first.proc.wait(timeout=30)
        assert 0 < len(sent) < REQUESTS, "the kill should land mid-ingest"

        second = Serve(home)
        replies = [send(second.url, i) for i in range(REQUESTS)]
        assert all(replies[i]["replayed"] for i in sent)
        counts = second.sql("SELECT req, count(*) AS n FROM events GROUP BY req ORDER BY req")
        assert counts["rows"] == [[i, ROWS] for i in range(REQUESTS)]
        assert second.stop() == 0
    finally:
        pid = postmaster_pid(home)
        if pid:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home.parent, ignore_errors=True)
