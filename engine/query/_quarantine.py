"""Statements that crashed the server are refused for a while, across restarts.

A crash inside DataFusion (a segfault, a stack overflow) ends the whole process, so what
ran at that moment is learned only at the next start: each statement's fingerprint (a hash
of its text) is written to a slot of ``<folder>/running`` while it runs and blanked when it
ends. The slots are fixed-size records written in place (two ``pwrite`` calls a statement,
no fsync: a crashed process's writes are in the page cache, which the next start reads).
At start, a slot left written means that statement was running when the process died
without shutting down (a crash, or a kill -9); its time is added to ``crashes.json``. A
fingerprint with ``crashes`` of them in the last day is refused until ``seconds`` after the
latest (StatementQuarantinedError), so a poison row cannot take a server down in a loop.
A clean shutdown blanks the journal: statements it interrupts are not counted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import StatementQuarantinedError

T = TypeVar("T")
log = logging.getLogger("kyma.query")
_RECORD = 32  # bytes of a slot: 16 hex digits, a space, the start time, padding, a newline
_BLANK = b" " * (_RECORD - 1) + b"\n"
SETTING = "KYMA_QUARANTINE_SECONDS"
REMEMBERED = 86_400
"""How long a crash is remembered: a statement that crashed the server twice in a day is
refused for ``seconds`` after each crash from its second on."""


def fingerprint(sql: str) -> str:
    """The statement's fingerprint: a hash of its text with runs of blanks as one space and
    no final ``;`` (so a poison statement re-indented is the same one; case still counts).

    >>> fingerprint("SELECT 1;") == fingerprint("  SELECT   1 ") != fingerprint("select 1")
    True
    """
    text = " ".join(sql.split()).removesuffix(";").rstrip()
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class Quarantine:
    """The journal of running statements in ``folder`` and the crashes it recorded."""

    def __init__(
        self,
        folder: Path,
        seconds: float,
        crashes: int = 2,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.seconds = seconds
        self.crashes = crashes
        self._clock = clock
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._journal = folder / "running"
        self._record = folder / "crashes.json"
        self._times: dict[str, list[float]] = self._recover()
        self._fd = os.open(self._journal, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self._lock = threading.Lock()
        self._free: list[int] = []
        self._slots = 0
        self._closed = False

    def check(self, sql: str) -> str:
        """The statement's fingerprint, or StatementQuarantinedError if it is quarantined."""
        fp = fingerprint(sql)
        times = self._times.get(fp)
        if times:
            until = self._refused_until(times)
            if until is not None:
                when = datetime.fromtimestamp(until, UTC).strftime("%H:%M:%S UTC")
                log.warning("refused quarantined statement %s (until %s)", fp, when)
                raise StatementQuarantinedError(
                    f"statement {fp} is quarantined until {when}: the server crashed"
                    f" {len(times)} times while it ran ({SETTING}); it is refused"
                    " meanwhile",
                    fp,
                )
        return fp

    def running(self, fp: str, work: Callable[[], T]) -> T:
        """``work()``, with ``fp`` in the journal while it runs."""
        record = f"{fp} {int(self._clock())}".encode().ljust(_RECORD - 1) + b"\n"
        with self._lock:
            slot = self._free.pop() if self._free else self._take()
            if not self._closed:
                os.pwrite(self._fd, record, slot * _RECORD)
        try:
            crash_point("query.running")
            return work()
        finally:
            with self._lock:
                if not self._closed:
                    os.pwrite(self._fd, _BLANK, slot * _RECORD)
                self._free.append(slot)

    def close(self) -> None:
        """A clean shutdown: nothing left running counts as a crash (nor runs from now on:
        the descriptor stays open, so a statement still ending writes nowhere else)."""
        with self._lock:
            self._closed = True
            os.ftruncate(self._fd, 0)

    def _take(self) -> int:
        self._slots += 1
        return self._slots - 1

    def _refused_until(self, times: list[float]) -> float | None:
        if not self.seconds:
            return None
        now = self._clock()
        recent = [t for t in times if now - t < REMEMBERED]
        until = max(recent, default=now) + self.seconds
        return until if len(recent) >= self.crashes and now < until else None

    def _recover(self) -> dict[str, list[float]]:
        """The crash times kept, plus one for each statement the journal says was running."""
        times: dict[str, list[float]] = {}
        if self._record.exists():
            times = json.loads(self._record.read_text())
        now = self._clock()
        left = self._journal.read_bytes() if self._journal.exists() else b""
        for start in range(0, len(left) - _RECORD + 1, _RECORD):
            fields = left[start : start + _RECORD].split()
            if len(fields) != 2:
                continue
            fp, started = fields[0].decode(), float(fields[1])
            times.setdefault(fp, []).append(started)
            count = sum(1 for t in times[fp] if now - t < REMEMBERED)
            log.error(
                "statement %s was running when kyma stopped without shutting down"
                " (%d such stops in a day; %d quarantine it)",
                fp,
                count,
                self.crashes,
            )
        kept = {p: [t for t in ts if now - t < REMEMBERED] for p, ts in times.items()}
        kept = {p: ts for p, ts in kept.items() if ts}
        for fp, ts in kept.items():
            if (until := self._refused_until(ts)) is not None:
                log.error("statement %s is quarantined for %.0f s", fp, until - now)
        temporary = self._record.with_suffix(".tmp")
        temporary.write_text(json.dumps(kept))
        os.chmod(temporary, 0o600)
        temporary.replace(self._record)
        return kept
