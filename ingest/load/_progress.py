"""How far a load is: its counters on the driver, and the datagrams tasks send them.

Spark's accumulators reach the driver only when a task ends, so a task also sends, after
every piece it writes, ``(split, rows, bytes)`` so far as one UDP datagram to the driver.
Best effort: a lost datagram only delays the counters until the task's accumulator lands.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

DATAGRAM = struct.Struct("!qqq")  # split, rows so far, bytes so far


@dataclass
class LoadProgress:
    """What a running load has done; rates and ETA from the bytes of its current phase."""

    phase: str = "listing"  # listing, hashing, reading, writing, committing, done, failed
    files_total: int = 0
    files_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    rows_done: int = 0
    started: float = field(default_factory=time.monotonic)
    phase_started: float = field(default_factory=time.monotonic)
    eta_seconds: float | None = None

    def enter(self, phase: str) -> None:
        """A new phase, counting bytes and rows from zero."""
        self.phase, self.phase_started = phase, time.monotonic()
        self.bytes_done = self.rows_done = 0
        self.eta_seconds = None

    def advance(self, rows: int, size: int) -> None:
        """Rows and bytes done so far in this phase (never moving back)."""
        self.rows_done, self.bytes_done = max(self.rows_done, rows), max(self.bytes_done, size)
        rate = self._rate(self.bytes_done)
        if rate:
            self.eta_seconds = max(0, self.bytes_total - self.bytes_done) / rate

    def _rate(self, amount: int) -> float:
        elapsed = time.monotonic() - self.phase_started
        return amount / elapsed if elapsed > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "files_total": self.files_total,
            "files_done": self.files_done,
            "bytes_total": self.bytes_total,
            "bytes_done": self.bytes_done,
            "rows_done": self.rows_done,
            "bytes_per_second": round(self._rate(self.bytes_done)),
            "rows_per_second": round(self._rate(self.rows_done)),
            "elapsed_seconds": round(time.monotonic() - self.started, 1),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
        }


class ProgressChannel:
    """The driver's end: the latest ``(rows, bytes)`` each split reported."""

    def __init__(self, host: str) -> None:
        self._splits: dict[int, tuple[int, int]] = {}
        self._socket: socket.socket | None = None
        self.address: tuple[str, int] | None = None
        try:
            self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._socket.bind((host, 0))
            self._socket.settimeout(0.2)
            self.address = self._socket.getsockname()
        except OSError:  # no channel: the accumulators alone, at each task's end
            self.close()
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True, name="load-progress-in")
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set() and self._socket is not None:
            try:
                data = self._socket.recv(DATAGRAM.size)
            except (TimeoutError, OSError):
                continue
            if len(data) == DATAGRAM.size:
                split, rows, size = DATAGRAM.unpack(data)
                self._splits[split] = (rows, size)

    def totals(self) -> tuple[int, int]:
        """Rows and bytes over every split heard from."""
        values = list(self._splits.values())
        return sum(r for r, _ in values), sum(b for _, b in values)

    def close(self) -> None:
        if self.address is not None:
            self._stop.set()
            self._thread.join()
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class SplitReporter:
    """A task's end: sends how far its split is; never fails the task."""

    def __init__(self, address: tuple[str, int] | None) -> None:
        self._address = address
        self._socket = None if address is None else socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(self, split: int, rows: int, size: int) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.sendto(DATAGRAM.pack(split, rows, size), self._address)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
