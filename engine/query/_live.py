"""An answer read as it is computed: DataFusion's record-batch stream, pulled a batch at a
time, so that a caller that sends rows on (the Postgres protocol) holds one batch, not the
whole answer, and a cursor reads on from where it stopped.

Each ``fetch`` runs like a statement of its own (``QueryEngine`` gives the guard): listed,
within a concurrency slot, the timeout and the caller's cancel. Between fetches nothing runs.
The scans' folders stay leased until the stream ends or is closed.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol

import pyarrow as pa

from kyma.engine.errors import KymaError
from kyma.engine.query._datafusion import translate
from kyma.engine.query._limits import Cancel, QueryLimits, ResultCount, checkpoint, drain

Sink = Callable[[pa.Table], None]
FIRST_ROWS = 8192
"""Rows read with the statement itself (DataFusion's batch size): a smaller answer is whole
when it leaves the statement, so a point query costs no second round."""
Guard = Callable[[Callable[[], bool], Cancel | None, float], bool]
"""Runs a fetch's work as a statement: (work, cancel, timeout) → what the work returns."""


class Live(Protocol):
    """Rows still to come of an answer (``QueryResult.live``)."""

    schema: pa.Schema

    def fetch(
        self, limit: int, sink: Sink, *, cancel: Cancel | None = None, timeout: float = 0
    ) -> bool:
        """Hand the next ``limit`` rows (0: all that remain) to ``sink``, a table at a time;
        True once none remain."""
        ...

    def close(self) -> None: ...


class LiveRows:
    """The rest of a query's answer, DataFusion still computing it. ``shape`` makes each
    batch the answer's table (names, plain strings); later batches are cast to the first's
    schema, as a collected answer's are."""

    def __init__(
        self,
        stream: Any,
        schema: pa.Schema,
        shape: Callable[[pa.Table], pa.Table],
        limits: QueryLimits | None,
    ) -> None:
        self.schema = schema
        self.guard: Guard | None = None  # set by the engine before the answer leaves it
        self._holder = [stream]
        self._shape = shape
        self._limits = limits
        self._counted = ResultCount(limits)
        self._held: pa.Table | None = None  # rows of a batch beyond the last fetch's limit
        self._typed = False
        self._release: weakref.finalize | None = None
        self._sinking = threading.Lock()

    def lease(self, release: Callable[[], None]) -> None:
        """``release`` is called once the stream ends, is closed, or is dropped."""
        self._release = weakref.finalize(self, release)

    @property
    def done(self) -> bool:
        return not self._holder and self._held is None

    def first(self) -> pa.Table:
        """The answer's first rows, read in the running statement: batches until they hold
        ``FIRST_ROWS`` rows or the stream ends (then it is closed, and they are the answer:
        a small answer is read in one go, as a collected one is)."""
        got: list[pa.Table] = []
        self._pull(0, got.append, until=FIRST_ROWS)
        if not got:
            return self.schema.empty_table()
        return pa.concat_tables(got) if len(got) > 1 else got[0]

    def fetch(
        self, limit: int, sink: Sink, *, cancel: Cancel | None = None, timeout: float = 0
    ) -> bool:
        if self._held is not None:
            held, self._held = self._held, None
            if limit and held.num_rows >= limit:
                sink(held.slice(0, limit))
                self._held = held.slice(limit) if held.num_rows > limit else None
                return self.done
            sink(held)
            limit = limit - held.num_rows if limit else 0
        if not self._holder:
            return True
        if self.guard is None:
            return self._pull(limit, sink)
        try:
            return self.guard(lambda: self._pull(limit, sink), cancel, timeout)
        finally:
            with self._sinking:  # an abandoned fetch's sink call ends before the caller goes on
                pass

    def close(self) -> None:
        """Stop DataFusion's work on it and give the scans' folders back."""
        self._holder.clear()
        self._held = None
        if self._release is not None:
            self._release()

    def _pull(self, limit: int, sink: Sink, until: int = 0) -> bool:
        """Up to ``limit`` rows (0: all) to ``sink`` (``until``: whole batches, until they
        hold that many rows); True once the stream ended (it is closed then)."""
        left = [limit or until]

        def add(batch: Any) -> bool:
            table = self._table(batch)
            if until:
                sink(table)  # kept: the statement's own answer
                left[0] -= table.num_rows
                return left[0] <= 0
            if limit and table.num_rows > left[0]:
                self._held = table.slice(left[0])
                table = table.slice(0, left[0])
            with self._sinking:  # never after the fetch was given up (a timeout, a cancel)
                checkpoint()
                sink(table)
            left[0] -= table.num_rows
            return bool(limit) and left[0] <= 0

        try:
            if drain(self._holder, add):
                return False
        except KymaError:
            self.close()
            raise
        except Exception as e:  # DataFusion raises ValueError/Exception with its message
            self.close()
            raise translate(e, self._limits) from None
        self.close()
        return True

    def _table(self, batch: Any) -> pa.Table:
        table = self._shape(pa.Table.from_batches([self._counted.add(batch.to_pyarrow())]))
        if not self._typed:  # the first batch's schema is the answer's
            self.schema, self._typed = table.schema, True
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        return table
