"""Every CLI command run on the home of a live ``kyma serve`` leaves that server's catalog up."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Serve


@pytest.fixture(scope="module")
def serve() -> Iterator[Serve]:
    # Outside /tmp/pytest-of-root (mode 700), so the postgres user can reach it.
    home = Path(tempfile.mkdtemp(prefix="kyma-cli-", dir="/tmp")) / "home"
    server = Serve(home)
    server.sql("CREATE TABLE logs (n long)")
    yield server
    assert server.stop() == 0
    shutil.rmtree(home.parent, ignore_errors=True)


def kyma(serve: Serve, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kyma", *args],
        env={**os.environ, "KYMA_HOME": str(serve.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def assert_server_answers_quickly(serve: Serve) -> None:
    started = time.monotonic()
    assert serve.sql("SELECT count(*) FROM logs")["rows"] == [[0]]
    assert time.monotonic() - started < 5, "the catalog was stopped under the server"


@pytest.mark.parametrize(
    "args", [("maintenance",), ("compact",), ("token", "list")], ids=lambda a: a[0]
)
def test_one_shot_command_leaves_the_adopted_catalog_running(
    serve: Serve, args: tuple[str, ...]
) -> None:
    out, _ = kyma(serve, *args).communicate(timeout=120)
    assert "adopted the PostgreSQL already running" in out, out
    assert "stopped PostgreSQL" not in out, out
    assert_server_answers_quickly(serve)
    if args == ("maintenance",):  # stdout: one JSON object, not a Python dict
        done = subprocess.run(
            [sys.executable, "-m", "kyma", "maintenance"],
            env={**os.environ, "KYMA_HOME": str(serve.home)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert set(report) >= {"extents_compacted", "orphans_deleted"}, done.stdout
        assert "adopted the PostgreSQL already running" in done.stderr


@pytest.mark.parametrize("command", ["serve", "maintenance", "kafka-consume"])
def test_help_of_a_command_lists_the_settings_it_reads(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kyma", command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "KYMA_HTTP_PORT" in done.stdout and "KYMA_CATALOG_URL" in done.stdout, done.stdout


@pytest.mark.parametrize("command", ["kafka-consume", "cdc-sync"])
def test_worker_stopped_by_sigterm_leaves_the_adopted_catalog_running(
    serve: Serve, command: str
) -> None:
    worker = kyma(serve, command)
    assert worker.stdout is not None
    lines = []
    for line in worker.stdout:  # bounded: the worker exits (and the loop ends) on any failure
        lines.append(line)
        if f"kyma {command}: running" in line:
            break
    worker.send_signal(signal.SIGTERM)
    rest, _ = worker.communicate(timeout=60)
    out = "".join(lines) + rest
    assert worker.returncode == 0, out
    assert "stopped PostgreSQL" not in out, out
    assert_server_answers_quickly(serve)
