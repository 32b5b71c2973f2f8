"""``kill -9`` of ``kyma serve`` leaves none of its ingest worker processes behind."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from serve_helpers import Serve, request

WAIT_SECONDS = 15


def _children() -> dict[int, list[int]]:
    """Every running process's children, from /proc (zombies left out)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return children


def _python_descendants(pid: int) -> set[int]:
    """The server's forkserver, resource tracker and workers (not a Postgres it started)."""
    children, found, todo = _children(), set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                if "python" in Path(f"/proc/{child}/comm").read_text():
                    found.add(child)
            except FileNotFoundError:
                pass
    return found


def _workers(pid: int) -> set[int]:
    """The processes the server's forkserver started: the ingest workers."""
    children = _children()
    return {w for c in children.get(pid, []) for w in children.get(c, [])} & _python_descendants(
        pid
    )


def test_workers_exit_when_the_server_is_killed(tmp_path: Path, catalog_url: str) -> None:
    serve = Serve(tmp_path / "home", KYMA_CATALOG_URL=catalog_url, KYMA_INGEST_WORKERS="2")
    helpers: set[int] = set()
    try:
        # kyma serve starts its two workers before the first ingest
        deadline = time.monotonic() + WAIT_SECONDS
        while len(_workers(serve.proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_workers(serve.proc.pid)) == 2
        serve.sql("CREATE TABLE pooled (a long)")
        body = b"".join(b'{"a": %d}\n' % i for i in range(1000))
        status, _, answer = request(f"{serve.url}/v1/ingest/pooled", body)
        assert status == 200, answer
        helpers = _python_descendants(serve.proc.pid)
        # the forkserver and at least one worker
        assert len(helpers) >= 2, helpers
    finally:
        serve.proc.send_signal(signal.SIGKILL)
    # Not reaped yet: the killed server stays a zombie, which must count as dead.
    deadline = time.monotonic() + WAIT_SECONDS
    left = helpers
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        running = {p for kids in _children().values() for p in kids}
        left = helpers & running
    serve.proc.wait(timeout=30)
    assert not left, f"processes {sorted(left)} outlived the killed server"
