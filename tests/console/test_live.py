"""Live tail's pub/sub: appends go to the tails of their table, a slow tail loses the oldest."""

from __future__ import annotations

import pytest

from kyma.console.live import LiveHub, Subscription
from kyma.engine.catalog._commit import CommitEvent
from kyma.engine.errors import PoolExhaustedError


def _event(table: str, rows: int = 1, appends: bool = True) -> CommitEvent:
    return CommitEvent(table, "rest", rows, 10, 1, 0.0, 7, (), appends)


def test_the_hub_hands_appends_to_the_tails_of_their_table() -> None:
    hub = LiveHub(max_subscribers=2)
    with hub.subscribe("a") as a, hub.subscribe("b") as b:
        with pytest.raises(PoolExhaustedError), hub.subscribe("a"):
            pass
        hub.publish(_event("a"))
        hub.publish(_event("a", appends=False))  # a compaction, DELETE, UPDATE
        hub.publish(_event("a", rows=0))
        assert a.next(0) == _event("a") and a.next(0) is None
        assert b.next(0) is None
    with hub.subscribe("a"):  # both left: two may subscribe again
        pass


def test_a_tail_that_falls_behind_loses_the_oldest_commits() -> None:
    subscription = Subscription("a")
    for snapshot in range(300):
        subscription.put(CommitEvent("a", "rest", 1, 1, 1, 0.0, snapshot))
    assert subscription.dropped == 300 - 256
    first = subscription.next(0)
    assert first is not None and first.snapshot_id == 300 - 256
