"""One real ``kyma serve`` with a ``logs`` table for the REPL tests, and a terminal on it."""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from repl_terminal import Terminal
from serve_helpers import Serve

ROWS = 8000


@pytest.fixture(scope="session")
def serve() -> Iterator[Serve]:
    # Outside /tmp/pytest-of-root (mode 700), so the postgres user can reach it.
    home = Path(tempfile.mkdtemp(prefix="kyma-repl-", dir="/tmp")) / "home"
    server = Serve(home)
    server.sql("CREATE TABLE logs (service_name string, duration long)")
    lines = [{"service_name": f"svc{i % 3}", "duration": i} for i in range(ROWS)]
    lines[0]["duration"] = None
    body = "\n".join(json.dumps(line) for line in lines).encode()
    request = urllib.request.Request(f"{server.url}/v1/ingest/logs", data=body)
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert json.load(answer)["rows"] == ROWS
    yield server
    assert server.stop(signal.SIGTERM) == 0
    shutil.rmtree(home.parent, ignore_errors=True)


@pytest.fixture
def terminal(serve: Serve, tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(serve.url, tmp_path)
    yield term
    if term.child.isalive():
        term.child.terminate(force=True)
