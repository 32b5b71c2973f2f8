"""The quarantine journal: what a crash leaves running counts, twice in a day refuses for
the window after the last, a clean close counts nothing, 0 seconds refuses nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kyma.engine.errors import StatementQuarantinedError
from kyma.engine.query import Quarantine

SQL = "SELECT s::numeric FROM t"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def crash_while_running(folder: Path, clock: Clock, seconds: float = 600) -> Quarantine:
    """A journal left as a crash leaves it: the statement's slot written, never blanked."""
    quarantine = Quarantine(folder, seconds, clock=clock)
    started, stop = threading.Event(), threading.Event()

    def work() -> None:
        started.set()
        stop.wait()

    fp = quarantine.check(SQL)
    thread = threading.Thread(target=quarantine.running, args=(fp, work), daemon=True)
    thread.start()
    started.wait()
    reopened = Quarantine(folder, seconds, clock=clock)  # the next start reads the journal
    stop.set()
    thread.join()
    return reopened


def test_two_crashes_refuse_until_the_window_ends(tmp_path: Path) -> None:
    clock = Clock()
    once = crash_while_running(tmp_path, clock)
    once.check(SQL)  # one crash: still runs
    clock.now += 60
    twice = crash_while_running(tmp_path, clock)
    with pytest.raises(StatementQuarantinedError, match="crashed 2 times") as refused:
        twice.check(f"  {SQL};")
    assert refused.value.fingerprint in str(refused.value)
    assert twice.check("SELECT 1")  # others run
    clock.now += 599
    with pytest.raises(StatementQuarantinedError):
        Quarantine(tmp_path, 600, clock=clock).check(SQL)  # it outlives a restart
    clock.now += 2  # 600 s after the last crash
    assert Quarantine(tmp_path, 600, clock=clock).check(SQL)
    clock.now += 3600
    with pytest.raises(StatementQuarantinedError, match="crashed 3 times"):
        crash_while_running(tmp_path, clock).check(SQL)  # a third crash within the day


def test_statements_that_ended_or_a_clean_close_count_nothing(tmp_path: Path) -> None:
    clock = Clock()
    for _ in range(3):
        quarantine = Quarantine(tmp_path, 600, clock=clock)
        fp = quarantine.check(SQL)
        assert quarantine.running(fp, lambda: 7) == 7
        with pytest.raises(ZeroDivisionError):
            quarantine.running(fp, lambda: 1 / 0)
    quarantine = Quarantine(tmp_path, 600, clock=clock)
    started, stop = threading.Event(), threading.Event()
    fp = quarantine.check(SQL)
    threading.Thread(
        target=quarantine.running, args=(fp, lambda: (started.set(), stop.wait())), daemon=True
    ).start()
    started.wait()
    quarantine.close()  # SIGTERM's shutdown while it runs
    stop.set()
    for _ in range(2):
        Quarantine(tmp_path, 600, clock=clock).check(SQL)
    assert (tmp_path / "running").stat().st_mode & 0o777 == 0o600


def test_zero_seconds_refuses_nothing(tmp_path: Path) -> None:
    clock = Clock()
    crash_while_running(tmp_path, clock, seconds=0)
    crash_while_running(tmp_path, clock, seconds=0).check(SQL)
