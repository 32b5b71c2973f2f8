"""The embedded Postgres against the system's real binaries: start, reuse, adopt, recover."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from kyma.engine.errors import CatalogUnavailableError, RuntimeStartError
from kyma.runtime.postgres import EmbeddedPostgres, find_pg_bin_dir


@pytest.fixture
def home() -> Iterator[Path]:
    """A fresh folder under /tmp, mode 0700 (pytest's own tmp_path is under a 0700 folder)."""
    path = Path(tempfile.mkdtemp(prefix="kyma-pg-test-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def logged() -> list[str]:
    return []


@pytest.fixture
def embedded(home: Path, logged: list[str]) -> Iterator[Callable[..., EmbeddedPostgres]]:
    """Makes EmbeddedPostgres objects and stops their servers whatever the test did."""
    made: list[EmbeddedPostgres] = []

    def make(data_dir: Path | None = None, settings: str = "") -> EmbeddedPostgres:
        pg = EmbeddedPostgres(data_dir or home / "catalog", log=logged.append, settings=settings)
        made.append(pg)
        return pg

    yield make
    for pg in made:
        pg.stop()
        if not pg.socket_dir.is_relative_to(home):
            shutil.rmtree(pg.socket_dir, ignore_errors=True)


def postmaster_pid(pg: EmbeddedPostgres) -> int:
    return int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])


def running(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (this machine's init reaps late) does not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_stopped(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while running(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs after {timeout}s"
        time.sleep(0.05)


def process_user(pid: int) -> str:
    return subprocess.run(
        ["ps", "-o", "user=", "-p", str(pid)], capture_output=True, text=True, check=True
    ).stdout.strip()


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def rows(url: str) -> list[tuple[str]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT name FROM events ORDER BY name").fetchall()


def insert(url: str, name: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS events (name text)")
        conn.execute("INSERT INTO events VALUES (%s)", (name,))


def test_data_survives_a_restart(embedded: Callable[..., EmbeddedPostgres]) -> None:
    pg = embedded()
    url = pg.start()
    assert url.startswith("postgresql://kyma:") and url.endswith("/kyma")
    assert pg.url == url
    insert(url, "first")
    pg.stop()
    assert not (pg.data_dir / "postmaster.pid").exists()
    with pytest.raises(CatalogUnavailableError):
        pg.url  # noqa: B018 - the property is what is tested

    url = pg.start()
    assert rows(url) == [("first",)]
    with psycopg.connect(url) as conn:
        settings = ["listen_addresses", "wal_level", "fsync", "server_encoding", "lc_collate"]
        shown = [conn.execute(f"SHOW {name}").fetchone()[0] for name in settings]
    assert shown == ["127.0.0.1", "logical", "on", "UTF8", "C.UTF-8"]
    info = pg.password_file.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()


def test_extra_settings_are_appended_after_kyma_s_own(
    embedded: Callable[..., EmbeddedPostgres],
) -> None:
    extra = "work_mem = '7MB'\nmax_wal_senders = 5\n"  # the second overrides kyma's 16
    url = embedded(settings=extra).start()
    with psycopg.connect(url) as conn:
        names = ["work_mem", "max_wal_senders", "wal_level"]
        shown = [conn.execute(f"SHOW {name}").fetchone()[0] for name in names]
    assert shown == ["7MB", "5", "logical"]


def test_a_running_server_is_adopted(embedded: Callable[..., EmbeddedPostgres]) -> None:
    first = embedded()
    url = first.start()
    insert(url, "kept")
    pid = postmaster_pid(first)

    second = embedded()  # the first kyma process "died" without stopping its server
    assert second.start() == url
    assert postmaster_pid(second) == pid
    assert rows(url) == [("kept",)]
    second.stop()
    wait_stopped(pid)
    first.stop()  # idempotent: nothing left to stop


def test_recovers_after_the_postmaster_is_killed(
    embedded: Callable[..., EmbeddedPostgres], logged: list[str]
) -> None:
    pg = embedded()
    insert(pg.start(), "committed")
    pid = postmaster_pid(pg)
    os.kill(pid, signal.SIGKILL)
    wait_stopped(pid)

    url = embedded().start()
    assert rows(url) == [("committed",)]
    assert f"removed the stale postmaster.pid of process {pid}" in logged
    assert "automatic recovery in progress" in pg.log_file.read_text()


def test_root_runs_the_server_as_an_unprivileged_user(
    embedded: Callable[..., EmbeddedPostgres], home: Path, logged: list[str]
) -> None:
    assert os.geteuid() == 0, "this test covers the root path; run the suite as root"
    pg = embedded()
    pg.start()
    pid = postmaster_pid(pg)
    assert process_user(pid) == "postgres"
    assert pg.data_dir.stat().st_uid == pwd.getpwnam("postgres").pw_uid
    assert any(line.startswith(f"added o+x to {home} ") for line in logged)
    pg.stop()
    wait_stopped(pid)
    assert not (pg.data_dir / "postmaster.pid").exists()


def test_a_long_home_puts_the_socket_under_tmp(
    embedded: Callable[..., EmbeddedPostgres], home: Path
) -> None:
    pg = embedded(home / ("h" * 90) / "catalog")
    url = pg.start()
    assert pg.socket_dir.parent == Path("/tmp")
    assert stat.S_IMODE(pg.socket_dir.stat().st_mode) == 0o700
    password = pg.password_file.read_text().strip()
    with psycopg.connect(
        host=str(pg.socket_dir), port=port_of(url), user="kyma", password=password, dbname="kyma"
    ) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_start_failure_shows_the_server_log(embedded: Callable[..., EmbeddedPostgres]) -> None:
    pg = embedded()
    pg.start()
    pg.stop()
    with open(pg.data_dir / "postgresql.conf", "a") as conf:
        conf.write("this is not a setting\n")
    with pytest.raises(RuntimeStartError, match="pg_ctl") as failure:
        pg.start()
    assert "syntax error" in str(failure.value)


def test_bin_dir_lookup() -> None:
    assert (find_pg_bin_dir() / "initdb").is_file()
    with pytest.raises(RuntimeStartError, match="apt-get install postgresql"):
        find_pg_bin_dir(Path("/nonexistent"))


# Runs as root long enough to import (the interpreter lives under /root, mode 0700), then
# drops to the given user for good before touching Postgres.
UNPRIVILEGED = """
import json, os, pwd, sys
from pathlib import Path
import psycopg
from kyma.runtime.postgres import EmbeddedPostgres

user = pwd.getpwnam(sys.argv[1])
os.setgroups([])
os.setgid(user.pw_gid)
os.setuid(user.pw_uid)
pg = EmbeddedPostgres(Path(sys.argv[2]), log=lambda line: None)
url = pg.start()
with psycopg.connect(url) as conn:
    who = conn.execute("SELECT current_user").fetchone()[0]
pid = int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])
print(json.dumps({"url": url, "pid": pid, "uid": os.geteuid(), "who": who}), flush=True)
sys.stdin.readline()
pg.stop()
"""


def test_an_unprivileged_user_runs_its_own_server(home: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    command = [sys.executable, "-c", UNPRIVILEGED, "nobody", str(home / "catalog")]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        try:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            report = json.loads(line)
            assert report["uid"] == nobody.pw_uid and report["who"] == "kyma"
            assert process_user(report["pid"]) == "nobody"
            with psycopg.connect(report["url"]) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
            _, errors = child.communicate("stop\n", timeout=60)
            assert child.returncode == 0, errors
            wait_stopped(report["pid"])
        finally:
            child.kill()
            leftover = home / "catalog" / "postmaster.pid"
            if leftover.exists():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(leftover.read_text().splitlines()[0]), signal.SIGQUIT)
