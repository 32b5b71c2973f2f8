"""Batches written by several threads at once, one partition's batches in the order polled.

The polling thread puts batches in the order it polled them. A lane (a thread) takes the
oldest waiting batch once no batch sharing a partition with it is being written, so a
partition's batches commit one after another, oldest first, while batches of other
partitions are coerced, written, fsynced and committed meanwhile (those steps mostly let
go of the GIL). A batch waiting for its partitions holds up the ones behind it, so the
order stays the polling order. ``idle`` waits until nothing is waiting or being written:
after a fenced batch, positions are read again only once no older batch can still land.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar


class Keyed(Protocol):
    @property
    def keys(self) -> frozenset[Hashable]: ...


T = TypeVar("T", bound=Keyed)
WAIT_SECONDS = 0.2  # how often a blocked caller looks at ``stop``


class Lanes(Generic[T]):
    """``count`` threads running ``write`` on the batches put, at most ``capacity`` waiting.

    An exception out of ``write`` stops every lane; it is kept in ``failure``.
    """

    def __init__(self, count: int, capacity: int, write: Callable[[T], None], name: str) -> None:
        self.capacity = capacity
        self.failure: BaseException | None = None
        self._write = write
        self._changed = threading.Condition()
        self._waiting: deque[T] = deque()
        self._busy: set[Hashable] = set()  # the partitions of the batches being written
        self._writing = 0
        self._closed = False
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
            for i in range(count)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def alive(self) -> bool:
        return self.failure is None and not self._closed

    @property
    def busy(self) -> bool:
        """Whether a batch is waiting or being written."""
        with self._changed:
            return bool(self._waiting or self._writing)

    @property
    def waiting(self) -> int:
        """Batches put and not taken by a lane yet."""
        with self._changed:
            return len(self._waiting)

    def put(self, batch: T, stop: threading.Event) -> bool:
        """Queue ``batch``, blocking while ``capacity`` batches wait; False if stopped first."""
        with self._changed:
            while len(self._waiting) >= self.capacity and self.alive:
                if stop.is_set():
                    return False
                self._changed.wait(WAIT_SECONDS)
            if not self.alive:
                return False
            self._waiting.append(batch)
            self._changed.notify_all()
            return True

    def idle(self, stop: threading.Event) -> bool:
        """Wait until no batch waits or is being written; False if stopped or failed first."""
        with self._changed:
            while (self._waiting or self._writing) and self.alive and not stop.is_set():
                self._changed.wait(WAIT_SECONDS)
            return self.alive and not (self._waiting or self._writing)

    def close(self) -> None:
        """Let the batches being written finish, drop those waiting, stop the lanes."""
        with self._changed:
            self._closed = True
            self._waiting.clear()
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()

    def _take(self) -> T | None:
        with self._changed:
            while True:
                if not self.alive:
                    return None
                if self._waiting and not (self._waiting[0].keys & self._busy):
                    batch = self._waiting.popleft()
                    self._busy |= batch.keys
                    self._writing += 1
                    self._changed.notify_all()
                    return batch
                self._changed.wait()

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            try:
                self._write(batch)
            except BaseException as e:  # the polling thread stops and raises it
                with self._changed:
                    self.failure = self.failure or e
            finally:
                with self._changed:
                    self._busy -= batch.keys
                    self._writing -= 1
                    self._changed.notify_all()
