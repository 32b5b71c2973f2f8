"""The threads statements run in (``QueryGate``), kept for the next statement once idle:
starting a thread for each took 0.2–1 ms of a point query's few, more under load."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

IDLE = 16
"""Idle threads kept at most; more are started when more statements run at once."""
IDLE_SECONDS = 60.0
"""A thread idle this long ends."""


class Workers:
    def __init__(self, idle: int = IDLE, idle_seconds: float = IDLE_SECONDS) -> None:
        self.most, self.seconds = idle, idle_seconds
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` in an idle thread, or a new one; return at once."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
        worker.jobs.put(work)

    def _done(self, worker: _Worker) -> bool:
        """Whether ``worker`` waits for more (False: it ends)."""
        with self._lock:
            if len(self._idle) >= self.most:
                return False
            self._idle.append(worker)
            return True

    def _retire(self, worker: _Worker) -> bool:
        """Whether an idle ``worker`` may end (not if it was just handed work)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker:
    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        threading.Thread(target=self._loop, daemon=True, name="query").start()

    def _loop(self) -> None:
        while True:
            try:
                work = self.jobs.get(timeout=self.workers.seconds)
            except queue.Empty:
                if self.workers._retire(self):
                    return
                continue
            work()
            del work
            if not self.workers._done(self):
                return
