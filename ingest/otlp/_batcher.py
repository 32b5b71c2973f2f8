"""Group commit: concurrent exports into one table share one snapshot.

An export hands its part (a decoded request, counted in rows and bytes) to the table's
``GroupCommit`` and waits. The committing thread converts the whole group at once
(``assemble``: one Arrow batch, and each part's own outcome or error) and writes it.
Batching is natural, as in Postgres's group commit: while no commit of the table is in
progress, what is waiting commits at once (a lone export is answered after one commit, with
no wait); exports arriving during a commit gather and go together the moment it ends, so
batches grow with the load and shrink when it falls. Two bounds hold besides:

- a batch takes at most ``max_rows`` rows and ``max_bytes`` bytes (of export bodies; of
  Arrow data for parts that are batches; an export larger than that goes alone); a full
  batch does not wait for the commit in progress;
- an export waits at most ``max_latency`` seconds for a commit in progress: past it, its
  batch goes on a second committing thread (``committers``), overlapping the first one's
  extent write and fsyncs (the catalog orders the commits).

Every export of a batch is answered together: all acknowledged (the rows are in the catalog)
or all failed with a RetryableError (nothing of the batch is); a part that ``assemble``
refused alone (bad input) fails with its own error, and the others go on without it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from kyma.engine.errors import RetryableError
from kyma.ingest.source_metrics import SourceMetrics
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.ingest.otlp")

Assemble = Callable[[Sequence[Any]], tuple[pa.RecordBatch, Sequence[Any]]]
"""Parts → one batch, and per part its outcome (what ``submit`` returns) or the Exception
it alone fails with."""


def concatenated(batches: Sequence[pa.RecordBatch]) -> tuple[pa.RecordBatch, list[None]]:
    """The default ``assemble``: parts that are Arrow batches already."""
    return pa.concat_batches(batches), [None] * len(batches)


@dataclass
class _Waiter:
    part: Any
    rows: int
    nbytes: int
    arrived: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: Any = None
    error: Exception | None = None  # why the batch's commit failed, or (refused) this part
    refused: bool = False


class GroupCommit:
    def __init__(
        self,
        write_path: WritePath,
        table: str,
        *,
        max_rows: int,
        max_latency: float,
        max_bytes: int = 64 << 20,
        committers: int = 2,
        assemble: Assemble = concatenated,
    ) -> None:
        self.write_path = write_path
        self.assemble = assemble
        self.table = table
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.max_latency = max_latency
        self.metrics = SourceMetrics("rows")  # lag: rows waiting for their commit
        self._changed = threading.Condition()
        self._pending: list[_Waiter] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._committing = 0  # commits in progress
        self._closing = False
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"otlp-{table}-{i}")
            for i in range(committers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(
        self, part: Any, timeout: float, *, rows: int | None = None, nbytes: int | None = None
    ) -> Any:
        """``part``'s outcome once its rows are committed; RetryableError when they were not,
        or not in time; the error ``assemble`` refused it with. ``rows`` and ``nbytes``
        count it for the bounds (default: ``part`` is an Arrow batch and says)."""
        rows = part.num_rows if rows is None else rows
        nbytes = part.nbytes if nbytes is None else nbytes
        waiter = _Waiter(part, rows, nbytes)
        with self._changed:
            if self._closing:
                raise RetryableError(f"the OTLP receiver of {self.table!r} is shutting down")
            self._pending.append(waiter)
            self._pending_rows += rows
            self._pending_bytes += nbytes
            self.metrics.lag = self._pending_rows
            self._changed.notify()
        if not waiter.done.wait(timeout):
            raise RetryableError(f"the commit into {self.table!r} took over {timeout:g} s")
        if waiter.refused:
            assert waiter.error is not None
            raise waiter.error
        if waiter.error is not None:
            raise RetryableError(f"the commit into {self.table!r} failed: {waiter.error}") from (
                waiter.error
            )
        return waiter.outcome

    def close(self) -> None:
        """Commit what is pending, then stop."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        for thread in self._threads:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due():
                    if self._closing and not self._pending:
                        return
                    self._changed.wait(self._wait_left())
                group = self._take()
                self._committing += 1
                self.metrics.lag = self._pending_rows
            try:
                self._commit(group)
            finally:
                with self._changed:
                    self._committing -= 1
                    self._changed.notify_all()  # the next batch may go now

    def _due(self) -> bool:
        """Whether the pending exports should commit now (called holding the lock)."""
        if not self._pending:
            return False
        if self._committing == 0 or self._closing or self._full():
            return True
        return time.monotonic() - self._pending[0].arrived >= self.max_latency

    def _wait_left(self) -> float | None:
        """Seconds until the oldest pending export's wait runs out; None: nothing pending."""
        if not self._pending:
            return None
        return max(0.0, self._pending[0].arrived + self.max_latency - time.monotonic())

    def _full(self) -> bool:
        return self._pending_rows >= self.max_rows or self._pending_bytes >= self.max_bytes

    def _take(self) -> list[_Waiter]:
        """The oldest pending exports, as many as fit the bounds (at least one)."""
        rows = nbytes = taken = 0
        for waiter in self._pending:
            rows += waiter.rows
            nbytes += waiter.nbytes
            if taken and (rows > self.max_rows or nbytes > self.max_bytes):
                rows -= waiter.rows
                nbytes -= waiter.nbytes
                break
            taken += 1
        group, self._pending = self._pending[:taken], self._pending[taken:]
        self._pending_rows -= rows
        self._pending_bytes -= nbytes
        if self._pending:
            self._changed.notify()  # another committing thread may take the rest
        return group

    def _commit(self, group: list[_Waiter]) -> None:
        error: Exception | None = None
        try:
            batch, outcomes = self.assemble([waiter.part for waiter in group])
            for waiter, outcome in zip(group, outcomes, strict=True):
                if isinstance(outcome, Exception):
                    waiter.error, waiter.refused = outcome, True
                else:
                    waiter.outcome = outcome
            if batch.num_rows:
                self.write_path.ingest_batches(self.table, [batch], source="otlp")
                self.metrics.committed(batch.num_rows)
        except Exception as e:
            log.warning("OTLP commit of %d exports into %r failed: %s", len(group), self.table, e)
            self.metrics.error(f"the commit into {self.table!r} failed: {e}")
            error = e
        for waiter in group:
            if not waiter.refused:
                waiter.error = error
            waiter.done.set()
