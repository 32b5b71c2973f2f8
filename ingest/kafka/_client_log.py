"""librdkafka's own log, into kyma's log at most once per facility every ``EVERY_SECONDS``.

A client that cannot reach its broker logs every reconnect attempt (dozens a second across
brokers and threads). Given a Python logger, confluent-kafka hands each line to it from the
consumer's poll; this logger's filter lets the first line of each level and facility
(``FAIL``, ``ERROR``, ``SASL``…) through, then counts the others until the interval has
passed, and the next one that passes says how many were left out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

EVERY_SECONDS = 30.0
CLIENT_LOGGER = "kyma.kafka.client"


class RateLimit(logging.Filter):
    """At most one record per (level, librdkafka facility) every ``every`` seconds."""

    def __init__(
        self, every: float = EVERY_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.every = every
        self.clock = clock
        self._last: dict[tuple[int, str], float] = {}
        self._dropped: dict[tuple[int, str], int] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        key = (record.levelno, str(args[0]) if args else record.getMessage())
        now = self.clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.every:
                self._dropped[key] = self._dropped.get(key, 0) + 1
                return False
            self._last[key] = now
            dropped = self._dropped.pop(key, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like it in the last {self.every:g} s)"
        return True


def client_logger(source: str) -> logging.Logger:
    """The logger a source's client writes librdkafka's log to, rate limited per source."""
    logger = logging.getLogger(f"{CLIENT_LOGGER}.{source}")
    with _LOCK:
        if not any(isinstance(f, RateLimit) for f in logger.filters):
            logger.addFilter(RateLimit())
    return logger


_LOCK = threading.Lock()
