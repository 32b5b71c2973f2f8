"""Batches written by several threads at once, committed in the order polled.

The polling thread puts batches in the order it polled them, and a free lane (a thread)
takes the oldest waiting one at once: batches are coerced and their extents written side
by side (those steps mostly let go of the GIL). A batch's commit waits for its ``turn``:
until every batch put before it that shares a partition with it has finished, so each
partition's positions move forward one batch after another, oldest first. ``idle`` waits
until nothing is waiting or being written: after a fenced batch, positions are read again
only once no older batch can still land.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar


class Keyed(Protocol):
    @property
    def keys(self) -> frozenset[Hashable]: ...


T = TypeVar("T", bound=Keyed)
Turn = Callable[[], bool]
WAIT_SECONDS = 0.2  # how often a blocked caller looks at ``stop``


class Lanes(Generic[T]):
    """``count`` threads running ``write(batch, turn)`` on the batches put, at most
    ``capacity`` waiting; ``turn()`` blocks until the batch may commit (False if the lanes
    stopped first: then it must not).

    An exception out of ``write`` stops every lane; it is kept in ``failure``.
    """

    def __init__(
        self, count: int, capacity: int, write: Callable[[T, Turn], None], name: str
    ) -> None:
        self.count = count
        self.capacity = capacity
        self.failure: BaseException | None = None
        self._write = write
        self._changed = threading.Condition()
        self._waiting: deque[tuple[int, T]] = deque()
        self._unfinished: dict[int, frozenset[Hashable]] = {}  # put, not finished: keys
        self._numbers = itertools.count()
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
    def free(self) -> bool:
        """Whether a lane would take a batch put now."""
        with self._changed:
            return not self._waiting and self._writing < self.count

    @property
    def waiting(self) -> int:
        """Batches put and not taken by a lane yet."""
        with self._changed:
            return len(self._waiting)

    @property
    def writing(self) -> int:
        """Batches taken by a lane and not finished."""
        with self._changed:
            return self._writing

    def put(self, batch: T, stop: threading.Event) -> bool:
        """Queue ``batch``, blocking while ``capacity`` batches wait; False if stopped first."""
        with self._changed:
            while len(self._waiting) >= self.capacity and self.alive:
                if stop.is_set():
                    return False
                self._changed.wait(WAIT_SECONDS)
            if not self.alive:
                return False
            number = next(self._numbers)
            self._unfinished[number] = batch.keys
            self._waiting.append((number, batch))
            self._changed.notify_all()
            return True

    def idle(self, stop: threading.Event) -> bool:
        """Wait until no batch waits or is being written; False if stopped or failed first."""
        with self._changed:
            while (self._waiting or self._writing) and self.alive and not stop.is_set():
                self._changed.wait(WAIT_SECONDS)
            return self.alive and not (self._waiting or self._writing)

    def close(self) -> None:
        """Let the batches being written finish (those not at their turn yet give up),
        drop those waiting, stop the lanes."""
        with self._changed:
            self._closed = True
            for number, _ in self._waiting:
                del self._unfinished[number]
            self._waiting.clear()
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()

    def _turn(self, number: int, keys: frozenset[Hashable]) -> bool:
        with self._changed:
            while self.alive and any(
                earlier < number and keys & other for earlier, other in self._unfinished.items()
            ):
                self._changed.wait()
            return self.alive

    def _take(self) -> tuple[int, T] | None:
        with self._changed:
            while True:
                if not self.alive:
                    return None
                if self._waiting:
                    self._writing += 1
                    self._changed.notify_all()
                    return self._waiting.popleft()
                self._changed.wait()

    def _run(self) -> None:
        while (taken := self._take()) is not None:
            number, batch = taken
            try:
                self._write(batch, functools.partial(self._turn, number, batch.keys))
            except BaseException as e:  # the polling thread stops and raises it
                with self._changed:
                    self.failure = self.failure or e
            finally:
                with self._changed:
                    del self._unfinished[number]
                    self._writing -= 1
                    self._changed.notify_all()
