"""A bounded pool of ADBC connections to one source, with the counters status shows."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kyma.engine.errors import PoolExhaustedError


class ConnectionPool:
    """At most ``size`` connections; a caller waits ``timeout`` seconds for one, then fails."""

    def __init__(self, name: str, connect: Callable[[], Any], *, size: int, timeout: float) -> None:
        self.name = name
        self.size = size
        self.timeout = timeout
        self.exhausted_total = 0
        self._connect = connect
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[Any] = []
        self._in_use = 0
        self._lock = threading.Lock()

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection for one query. One that raised is closed, not reused."""
        if not self._slots.acquire(timeout=self.timeout):
            with self._lock:
                self.exhausted_total += 1
            raise PoolExhaustedError(
                f"connector {self.name!r}: all {self.size} connections stayed busy"
                f" for {self.timeout:g}s (raise connection.pool_size)"
            )
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            conn = conn if conn is not None else self._connect()
            with self._lock:
                self._in_use += 1
            try:
                yield conn
            except BaseException:
                _close(conn)
                raise
            else:
                with self._lock:
                    self._idle.append(conn)
            finally:
                with self._lock:
                    self._in_use -= 1
        finally:
            self._slots.release()

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "in_use": self._in_use,
                "idle": len(self._idle),
                "size": self.size,
                "exhausted_total": self.exhausted_total,
            }

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            _close(conn)


def _close(conn: Any) -> None:
    with contextlib.suppress(Exception):  # a broken connection may fail to close; drop it
        conn.close()
