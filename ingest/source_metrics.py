"""What every source reports, in its status and in ``/metrics``: rows committed and rows per
second, lag, the last commit's time, the last error and since when the source is degraded.

A source's worker (or the OTLP receiver's group commit, per signal) updates its record as it
commits; readers take a ``snapshot``. Times are Unix seconds.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

RATE_SECONDS = 10.0  # rows per second: over the commits of the last this many seconds


class SourceMetrics:
    def __init__(self, lag_unit: str = "rows", clock: Callable[[], float] = time.time) -> None:
        self.lag_unit = lag_unit  # what ``lag`` counts: messages, files, rows
        self.clock = clock
        self.rows = 0
        self.commits = 0
        self.errors = 0
        self.lag: int | None = None  # how far behind the source's input it is, when known
        self.last_commit_at: float | None = None
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self.degraded: str | None = None
        self.degraded_since: float | None = None
        self._recent: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def committed(self, rows: int) -> None:
        now = self.clock()
        with self._lock:
            self.rows += rows
            self.commits += 1
            self.last_commit_at = now
            self._recent.append((now, rows))
            self._forget(now)

    def error(self, message: str | None) -> None:
        with self._lock:
            self.last_error = message
            if message is not None:
                self.errors += 1
                self.last_error_at = self.clock()

    def degrade(self, reason: str | None) -> None:
        """Degraded for ``reason`` (since the first call of a spell), or well again (None)."""
        with self._lock:
            if reason is None:
                self.degraded_since = None
            elif self.degraded is None:
                self.degraded_since = self.clock()
            self.degraded = reason

    def rows_per_second(self) -> float:
        now = self.clock()
        with self._lock:
            self._forget(now)
            return sum(rows for _, rows in self._recent) / RATE_SECONDS

    def snapshot(self) -> dict[str, Any]:
        rate = self.rows_per_second()
        with self._lock:
            return {
                "rows_total": self.rows,
                "rows_per_second": round(rate, 1),
                "commits": self.commits,
                "lag": self.lag,
                "lag_unit": self.lag_unit,
                "last_commit_at": self.last_commit_at,
                "errors": self.errors,
                "last_error": self.last_error,
                "last_error_at": self.last_error_at,
                "degraded_reason": self.degraded,
                "degraded_since": self.degraded_since,
            }

    def _forget(self, now: float) -> None:
        while self._recent and self._recent[0][0] < now - RATE_SECONDS:
            self._recent.popleft()
