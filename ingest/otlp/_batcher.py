"""Group commit: concurrent exports into one table share one snapshot.

An export hands its rows to the table's ``GroupCommit`` and waits. A batch commits when it
holds ``max_rows`` rows or ``max_bytes`` bytes of Arrow data, or its first rows have waited
``max_latency`` seconds, whichever comes first; then every export in it is answered — all
acknowledged (the rows are in the catalog) or all failed with a RetryableError (nothing of
the batch is). Exports arriving during a commit gather in the next batch, which a second
committing thread writes while the first one's commit is still in progress (their extent
writes and fsyncs overlap; the catalog orders the commits).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import pyarrow as pa

from kyma.engine.errors import RetryableError
from kyma.ingest.source_metrics import SourceMetrics
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.ingest.otlp")


@dataclass
class _Waiter:
    batch: pa.RecordBatch
    done: threading.Event = field(default_factory=threading.Event)
    error: Exception | None = None  # why the batch's commit failed


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
    ) -> None:
        self.write_path = write_path
        self.table = table
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.max_latency = max_latency
        self.metrics = SourceMetrics("rows")  # lag: rows waiting for their commit
        self._changed = threading.Condition()
        self._pending: list[_Waiter] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._first_at = 0.0
        self._closing = False
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"otlp-{table}-{i}")
            for i in range(committers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, batch: pa.RecordBatch, timeout: float) -> None:
        """Return once ``batch`` is committed; RetryableError when it was not, or not in time."""
        waiter = _Waiter(batch)
        with self._changed:
            if self._closing:
                raise RetryableError(f"the OTLP receiver of {self.table!r} is shutting down")
            if not self._pending:
                self._first_at = time.monotonic()
            self._pending.append(waiter)
            self._pending_rows += batch.num_rows
            self._pending_bytes += batch.nbytes
            self.metrics.lag = self._pending_rows
            self._changed.notify_all()
        if not waiter.done.wait(timeout):
            raise RetryableError(f"the commit into {self.table!r} took over {timeout:g} s")
        if waiter.error is not None:
            raise RetryableError(f"the commit into {self.table!r} failed: {waiter.error}") from (
                waiter.error
            )

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
                while not self._pending and not self._closing:
                    self._changed.wait()
                if not self._pending:
                    return
                deadline = self._first_at + self.max_latency
                while self._pending and not self._full() and not self._closing:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._changed.wait(left)
                if not self._pending:
                    continue  # the other committing thread took the batch
                group, self._pending = self._pending, []
                self._pending_rows = self._pending_bytes = 0
            self._commit(group)
            with self._changed:
                self.metrics.lag = self._pending_rows

    def _full(self) -> bool:
        return self._pending_rows >= self.max_rows or self._pending_bytes >= self.max_bytes

    def _commit(self, group: list[_Waiter]) -> None:
        error: Exception | None = None
        try:
            batch = pa.concat_batches([waiter.batch for waiter in group])
            self.write_path.ingest_batches(self.table, [batch], source="otlp")
            self.metrics.committed(batch.num_rows)
        except Exception as e:
            log.warning("OTLP commit of %d exports into %r failed: %s", len(group), self.table, e)
            self.metrics.error(f"the commit into {self.table!r} failed: {e}")
            error = e
        for waiter in group:
            waiter.error = error
            waiter.done.set()
