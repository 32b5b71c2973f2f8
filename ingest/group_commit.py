"""Group commit: appends to one table that are ready while its commit is in flight share
the next catalog transaction.

A request that finds no commit of its table running commits at once, alone. One that
finds one running waits; when it ends, the first waiter commits every waiting request of
its source (a snapshot's summary names one) as one snapshot: all their extents, and each
request's payload (its ledger row with its own idempotency key and acknowledgement, its
source positions, its column statistics) run one after the other in that transaction. So
a burst of N concurrent requests costs about two transactions, not N, and each still
lands whole or not at all.

If a shared transaction fails with anything but CatalogUnavailableError (a payload's
conflict, a dropped table), each request of the group is committed again alone, so its
answer is exactly the one it would have had without grouping. CatalogUnavailableError
(the commit may have landed) goes to every request of the group: a retry with the same
idempotency key finds its ledger row, or commits afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from kyma.engine.catalog import Catalog, CommitResult, Payload
from kyma.engine.errors import CatalogUnavailableError
from kyma.engine.format import ExtentWriteResult
from kyma.engine.storage import ObjectStore

MAX_GROUP = 64
"""At most this many requests share a transaction (its payloads run one by one)."""


@dataclass(eq=False)
class _Request:
    written: Sequence[ExtentWriteResult]
    payload: Payload | None
    source: str
    result: CommitResult | None = None
    error: BaseException | None = None
    done: bool = False

    def outcome(self) -> CommitResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@dataclass
class _Lane:
    """The requests of one table waiting for a commit, and whether one runs."""

    ready: threading.Condition = field(default_factory=threading.Condition)
    waiting: list[_Request] = field(default_factory=list)
    busy: bool = False


class GroupCommit:
    """Commits appends to ``catalog``, grouping the concurrent ones of a table; their
    extents are synced in ``store`` first (``ObjectStore.sync``), once for the group."""

    def __init__(self, catalog: Catalog, store: ObjectStore) -> None:
        self.catalog = catalog
        self.store = store
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()

    def commit(
        self,
        table: str,
        written: Sequence[ExtentWriteResult],
        *,
        source: str,
        payload: Payload | None,
    ) -> CommitResult:
        """Publish ``written`` with ``payload`` in a snapshot of ``table``, perhaps shared
        with other requests' (each payload runs once, in that snapshot's transaction)."""
        with self._lock:
            lane = self._lanes.setdefault(table, _Lane())
        request = _Request(written, payload, source)
        with lane.ready:
            lane.waiting.append(request)
            lane.ready.notify_all()  # for ``waiting``
            while lane.busy and not request.done:
                lane.ready.wait()
            if request.done:
                return request.outcome()
            lane.busy = True
            others = [r for r in lane.waiting if r.source == source and r is not request]
            group = [request, *others[: MAX_GROUP - 1]]
            taken = {id(r) for r in group}
            lane.waiting = [r for r in lane.waiting if id(r) not in taken]
        try:
            self._run(table, source, group)
        finally:
            with lane.ready:
                lane.busy = False
                lane.ready.notify_all()
        return request.outcome()

    def waiting(self, table: str, timeout: float = 0, *, at_least: int = 1) -> int:
        """How many requests wait for the next commit of ``table`` (one is in flight);
        with ``timeout``, waits up to that many seconds for ``at_least`` of them."""
        with self._lock:
            lane = self._lanes.get(table)
        if lane is None:
            return 0
        with lane.ready:
            lane.ready.wait_for(lambda: len(lane.waiting) >= at_least, timeout)
            return len(lane.waiting)

    def _run(self, table: str, source: str, group: list[_Request]) -> None:
        try:
            if len(group) == 1:
                _settle(group, self._commit(table, source, group))
                return
            try:
                _settle(group, self._commit(table, source, group))
            except CatalogUnavailableError:
                raise
            except Exception:  # one request's payload may be the cause: each alone
                for request in group:
                    try:
                        _settle([request], self._commit(table, source, [request]))
                    except Exception as e:
                        request.error, request.done = e, True
        except BaseException as e:
            for request in group:
                if not request.done:
                    request.error, request.done = e, True
            if not isinstance(e, Exception):
                raise

    def _commit(self, table: str, source: str, group: list[_Request]) -> CommitResult:
        summary: dict[str, object] = {"source": source}
        if len(group) > 1:
            summary["requests"] = len(group)
        written = [w for request in group for w in request.written]
        self.store.sync(w.object_path for w in written)
        return self.catalog.commit(
            table,
            written,
            summary=summary,
            payload=chained([r.payload for r in group if r.payload is not None]),
        )


def _settle(group: list[_Request], result: CommitResult) -> None:
    for request in group:
        request.result, request.done = result, True


def chained(payloads: list[Payload]) -> Payload | None:
    """One payload running each of ``payloads`` in order (None for none)."""
    if len(payloads) <= 1:
        return payloads[0] if payloads else None

    def run(cur, snapshot_id: int) -> None:  # type: ignore[no-untyped-def]
        for payload in payloads:
            payload(cur, snapshot_id)

    return run
