"""No statement takes ``kyma serve`` down, what crashed it twice is refused for a while, and
its home folder is its own.

Against a real server (a start takes seconds, so one home serves every test here, in order):

- a statement that was running when the server died (the ``query.running`` crash point:
  SIGKILL with its fingerprint in the journal, as a segfault leaves it) twice is refused
  with 409 after the restart, its fingerprint in the log, while other statements run;
- the statements that segfaulted DataFusion (a 4 000-branch UNION ALL chain; a 3 M-digit
  text, and a stored 900 000-digit value, cast to a decimal) answer a precise 400 and the
  server answers the next query;
- the home is 0700, its files 0600, after a start and an ingest; a restart on a home made
  loose warns, naming the path and mode.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Serve, postmaster_pid, query, request

POISON = "SELECT 'poison' AS p"
UNION_CHAIN = " UNION ALL ".join(["SELECT 1"] * 4000)  # ~95 KB: a segfault on main
DIGITS = 900_000  # a row under the 1 MiB line limit


def _sent(serve: Serve, sql: str) -> int | None:
    """The status of ``sql``, or None when the connection died with the server."""
    try:
        return query(serve, sql, timeout=30)[0]
    except OSError:
        return None


@pytest.fixture(scope="module")
def crashed() -> Iterator[dict]:
    """A home whose server crashed twice running POISON, and the server started on it."""
    home = Path(tempfile.mkdtemp(prefix="kyma-contain-", dir="/tmp")) / "home"
    state: dict = {"home": home}
    started: list[Serve] = []
    try:
        first = Serve(home, KYMA_CRASH_AT="query.running:1")
        started.append(first)
        assert _sent(first, POISON) is None, "the server should die under the statement"
        assert first.proc.wait(timeout=30) == -signal.SIGKILL
        # One crash: not refused yet. The second run of it is the second crash.
        second = Serve(home, KYMA_CRASH_AT="query.running:2")
        started.append(second)
        state["second"] = second.output
        assert _sent(second, POISON) == 200
        assert _sent(second, POISON) is None
        assert second.proc.wait(timeout=30) == -signal.SIGKILL
        state["serve"] = Serve(home)
        yield state
    finally:
        for serve in [*started, state.get("serve")]:
            if serve is not None and serve.proc.poll() is None:
                serve.stop(signal.SIGKILL)
        pid = postmaster_pid(home)
        if pid:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home.parent, ignore_errors=True)


def _alive(serve: Serve) -> None:
    assert serve.proc.poll() is None, "".join(serve.output[-30:])
    status, _, answer = query(serve, "SELECT 40 + 2 AS answer")
    assert (status, answer["rows"]) == (200, [[42]])


def test_a_statement_that_crashed_the_server_twice_is_quarantined(crashed: dict) -> None:
    assert any(
        "stopped without shutting down (1 such stops in a day" in line for line in crashed["second"]
    )
    serve = crashed["serve"]
    status, _, answer = query(serve, POISON)
    assert status == 409, answer
    assert answer["error"] == "statement_quarantined_error"
    fingerprint = answer["message"].split()[1]
    assert len(fingerprint) == 16
    assert "crashed 2 times" in answer["message"]
    assert "KYMA_QUARANTINE_SECONDS" in answer["message"]
    assert any(f"statement {fingerprint} is quarantined" in line for line in serve.output)
    # The same statement re-indented is the same one; any other runs.
    assert query(serve, f"  {POISON.replace(' ', chr(10))} ;")[0] == 409
    _alive(serve)


def test_poison_statements_answer_400_and_the_server_goes_on(crashed: dict) -> None:
    serve = crashed["serve"]
    status, _, answer = query(serve, UNION_CHAIN)
    assert status == 400, answer
    assert answer["error"] == "statement_too_complex_error"
    assert "4000 set-operation branches" in answer["message"]
    assert "KYMA_MAX_PLAN_RELATIONS" in answer["message"]
    _alive(serve)

    status, _, answer = query(serve, "SELECT CAST(repeat('1', 3000000) AS DECIMAL(38, 0))")
    assert (status, answer["error"]) == (400, "out_of_range_error"), answer
    assert "value overflows numeric format" in answer["message"]
    _alive(serve)

    serve.sql("CREATE TABLE t (s string)")
    line = json.dumps({"s": "1" * DIGITS}).encode() + b"\n"
    assert request(f"{serve.url}/v1/ingest/t", line)[0] == 200
    for sql in ("SELECT s::numeric FROM t", "SELECT CAST(s AS DECIMAL(38, 0)) FROM t"):
        status, _, answer = query(serve, sql)
        assert (status, answer["error"]) == (400, "out_of_range_error"), answer
        assert f"a numeric input of {DIGITS} characters" in answer["message"]
        _alive(serve)
    # A short text still casts, through the same guard.
    serve.sql("CREATE TABLE n (s string)")
    assert request(f"{serve.url}/v1/ingest/n", b'{"s": "12.50"}\n')[0] == 200
    assert serve.sql("SELECT s::numeric + 1 AS x FROM n")["rows"] == [[13.5]]


def _modes(home: Path) -> dict[Path, int]:
    """Every path under ``home`` but sockets (Postgres's is 0777 in a 0700 folder)."""
    found = {home: stat.S_IMODE(home.stat().st_mode)}
    for folder, folders, files in os.walk(home):
        for name in folders + files:
            path = Path(folder) / name
            info = path.lstat()
            if not stat.S_ISSOCK(info.st_mode):
                found[path] = stat.S_IMODE(info.st_mode)
    return found


def test_home_files_are_the_servers_alone(crashed: dict) -> None:
    home = crashed["home"]
    serve = crashed["serve"]
    assert request(f"{serve.url}/v1/ingest/t", b'{"s": "TOPSECRET"}\n')[0] == 200
    modes = _modes(home)
    extents = [p for p in modes if "objects" in p.parts and p.is_file()]
    assert extents, sorted(modes)
    loose = {
        str(path): oct(mode)
        for path, mode in modes.items()
        # A folder may let others pass (o+x: Postgres's own user when kyma is root).
        if mode & (0o066 if path.is_dir() else 0o077)
    }
    assert loose == {}
    assert all(modes[p] == 0o600 for p in extents)
    assert modes[home / "objects"] == 0o700


def test_a_loose_home_is_named_at_start(crashed: dict) -> None:
    home = crashed["home"]
    assert crashed["serve"].stop() == 0
    extent = next(p for p in (home / "objects").rglob("*") if p.is_file())
    (home / "objects").chmod(0o755)
    extent.chmod(0o644)
    serve = crashed["serve"] = Serve(home)
    said = "".join(serve.output)
    assert f"{home.absolute() / 'objects'} is mode 0755" in said
    # The quarantine outlives a clean restart too.
    assert query(serve, POISON)[0] == 409
    assert serve.stop() == 0
