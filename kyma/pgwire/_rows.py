"""What remains to send of an answer: the rows in hand, then its live rest, which the engine
computes as it is read (``QueryResult.live``). A portal, a cursor and a ``FETCH n`` hold one;
each Execute or FETCH sends on from where the last stopped, one batch in memory at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from kyma.engine.query import Cancel, QueryResult

Sink = Callable[[pa.Table], None]


class Rows:
    def __init__(self, result: QueryResult) -> None:
        self.schema = result.table.schema
        self.status = result.status
        self.held: pa.Table | None = result.table if result.table.num_rows else None
        self.live = result.live
        self.sent = 0  # rows handed on so far

    @property
    def done(self) -> bool:
        return self.held is None and self.live is None

    @property
    def held_bytes(self) -> int:
        return self.held.nbytes if self.held is not None else 0

    def send(
        self, limit: int, sink: Sink, cancel: Cancel | None = None, timeout: float = 0
    ) -> bool:
        """The next ``limit`` rows (0: all) to ``sink``; True once every row was sent."""

        def counted(table: pa.Table) -> None:
            self.sent += table.num_rows
            sink(table)

        if self.held is not None:
            held, self.held = self.held, None
            if limit and held.num_rows > limit:
                self.held = held.slice(limit)
                held = held.slice(0, limit)
            counted(held)
            if limit:
                limit -= held.num_rows
                if limit == 0:
                    return self.done
        if self.live is None:
            return True
        try:
            ended = self.live.fetch(limit, counted, cancel=cancel, timeout=timeout)
        except BaseException:
            self.close()
            raise
        if ended:
            self.live = None
        return ended

    def close(self) -> None:
        """Stop the engine's work on what was not sent."""
        self.held = None
        if self.live is not None:
            self.live.close()
            self.live = None


class Window:
    """``FETCH n`` (None: ALL) of a cursor's rows: sent on from the cursor, as they come."""

    def __init__(self, source: Rows, count: int | None, binary: bool = False) -> None:
        self.source, self.left = source, count
        self.schema = source.schema
        self.binary = binary  # a BINARY cursor's: binary rows for a simple query

    def fetch(
        self, limit: int, sink: Sink, *, cancel: Cancel | None = None, timeout: float = 0
    ) -> bool:
        if self.left == 0:
            return True
        want = self.left if not limit else limit if self.left is None else min(limit, self.left)
        before = self.source.sent
        ended = self.source.send(want or 0, sink, cancel, timeout)
        if self.left is not None:
            self.left -= self.source.sent - before
        return ended or self.left == 0

    def close(self) -> None:
        """The cursor stays open: only this FETCH's answer is over."""
