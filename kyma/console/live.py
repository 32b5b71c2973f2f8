"""Live tail's pub/sub: commits that only added rows, handed to the tails watching the table.

``LiveHub.publish`` is a catalog commit listener: it runs on the committing thread right after
the new snapshot became visible, so it must not block. Each subscriber has a bounded queue; a
subscriber that falls behind loses its oldest commits (``dropped`` counts them), never the
committer's time.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kyma.engine.catalog._commit import CommitEvent
from kyma.engine.errors import PoolExhaustedError

QUEUE_COMMITS = 256  # commits a subscriber may lag behind before the oldest are dropped


class Subscription:
    """The commits of one table since ``subscribe``; ``next`` waits for one."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.dropped = 0
        self._queue: queue.Queue[CommitEvent | None] = queue.Queue(QUEUE_COMMITS)

    def next(self, timeout: float) -> CommitEvent | None:
        """The next commit, or None after ``timeout`` seconds or once the hub closed."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def put(self, event: CommitEvent | None) -> None:
        while True:
            try:
                self._queue.put_nowait(event)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()
                    self.dropped += 1
                except queue.Empty:
                    pass


class LiveHub:
    """``max_subscribers``: tails open at once (each holds an HTTP worker thread)."""

    def __init__(self, max_subscribers: int = 4) -> None:
        self.max_subscribers = max_subscribers
        self._lock = threading.Lock()
        self._subscribers: list[Subscription] = []
        self.closed = threading.Event()

    def publish(self, event: CommitEvent) -> None:
        """Commit listener: hand an append to every subscriber of its table."""
        if not event.appends or not event.rows:
            return
        with self._lock:
            watching = [s for s in self._subscribers if s.table == event.table]
        for subscription in watching:
            subscription.put(event)

    @contextmanager
    def subscribe(self, table: str) -> Iterator[Subscription]:
        with self._lock:
            if len(self._subscribers) >= self.max_subscribers:
                raise PoolExhaustedError(
                    f"live tail: {self.max_subscribers} tails are open already (half of"
                    " KYMA_HTTP_THREADS); close one"
                )
            subscription = Subscription(table)
            self._subscribers.append(subscription)
        try:
            yield subscription
        finally:
            with self._lock:
                self._subscribers.remove(subscription)

    def close(self) -> None:
        """End every tail (the server is stopping): their streams finish at once."""
        self.closed.set()
        with self._lock:
            watching = list(self._subscribers)
        for subscription in watching:
            subscription.put(None)
