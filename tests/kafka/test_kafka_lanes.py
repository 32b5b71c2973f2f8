"""Committing threads: batches of different partitions at once, one partition's in order;
a polled round split by partition."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pyarrow as pa
import pytest

from kyma.ingest.kafka._batch import Origins, split
from kyma.ingest.kafka._lanes import Lanes

WAIT = 30.0


@dataclass
class Batch:
    name: str
    keys: frozenset = field(default_factory=frozenset)
    release: threading.Event = field(default_factory=threading.Event)


def until(what: str, ready) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while not ready():
        assert time.monotonic() < deadline, f"not after {WAIT}s: {what}"
        time.sleep(0.01)


class Recorder:
    """A ``write`` that logs when each batch starts and ends, and ends once released."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[str] = []

    def __call__(self, batch: Batch) -> None:
        self.started.append(batch.name)
        assert batch.release.wait(WAIT)
        self.ended.append(batch.name)


def test_other_partitions_are_written_meanwhile_and_one_partition_in_order() -> None:
    write = Recorder()
    lanes: Lanes[Batch] = Lanes(2, 10, write, "t")
    stop = threading.Event()
    a1, b1 = Batch("a1", frozenset({"a"})), Batch("b1", frozenset({"b"}))
    a2, c1 = Batch("a2", frozenset({"a", "c"})), Batch("c1", frozenset({"c"}))
    try:
        for batch in (a1, b1, a2, c1):
            assert lanes.put(batch, stop)
        until("a1 and b1 written at once", lambda: write.started == ["a1", "b1"])
        b1.release.set()
        until("b1 done", lambda: write.ended == ["b1"])
        time.sleep(0.1)  # a2 shares a with a1, and c1 waits behind a2 (the polling order)
        assert write.started == ["a1", "b1"] and lanes.waiting == 2
        a1.release.set()
        until("a2 after a1", lambda: write.started == ["a1", "b1", "a2"])
        time.sleep(0.1)
        assert lanes.waiting == 1  # c1 shares c with a2
        a2.release.set()
        c1.release.set()
        assert lanes.idle(stop)
        assert write.ended == ["b1", "a1", "a2", "c1"]
    finally:
        for batch in (a1, b1, a2, c1):
            batch.release.set()
        lanes.close()


def test_put_blocks_at_capacity_and_a_failure_stops_every_lane() -> None:
    def write(batch: Batch) -> None:
        if batch.name == "bad":
            raise ValueError("no")
        assert batch.release.wait(WAIT)

    lanes: Lanes[Batch] = Lanes(1, 1, write, "t")
    stop = threading.Event()
    first = Batch("first", frozenset({"a"}))
    try:
        assert lanes.put(first, stop)
        until("first taken", lambda: lanes.waiting == 0)
        assert lanes.put(Batch("bad", frozenset({"b"})), stop)
        stopper = threading.Timer(0.3, stop.set)
        stopper.start()
        assert not lanes.put(Batch("third"), stop)  # full: gives up once stopped
        first.release.set()
        until("the failure seen", lambda: not lanes.alive)
        assert isinstance(lanes.failure, ValueError)
        assert not lanes.put(Batch("fourth"), threading.Event())
    finally:
        first.release.set()
        lanes.close()


def origins(pairs: list[tuple[str, int]], offsets: list[int]) -> Origins:
    return Origins(
        pa.array([t for t, _ in pairs], pa.string()),
        pa.array([p for _, p in pairs], pa.int32()),
        pa.array(offsets, pa.int64()),
    )


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_split_keeps_each_partition_whole_and_in_order(parts: int) -> None:
    pairs = [("t", 0), ("t", 1), ("u", 0), ("t", 0), ("t", 2), ("u", 0), ("t", 1), ("t", 0)]
    offsets = [10, 20, 30, 11, 40, 31, 21, 12]
    messages = [f"m{i}" for i in range(len(pairs))]
    result = split(messages, origins(pairs, offsets), parts)
    assert len(result) == min(parts, 4)  # four partitions
    seen: dict[tuple[str, int], list[int]] = {}
    for part_messages, part_origins in result:
        positions = part_origins.next_positions()
        assert [f"m{offsets.index(o)}" for o in part_origins.offsets.to_pylist()] == part_messages
        for key in positions:
            assert key not in seen  # a partition is in one part only
            seen[key] = [
                o
                for (t, p), o in zip(pairs, offsets, strict=True)
                if (t, p) == key and o in part_origins.offsets.to_pylist()
            ]
        assert list(part_origins.offsets.to_pylist()) == sorted(
            part_origins.offsets.to_pylist(), key=offsets.index
        )  # the polled order
    assert seen == {("t", 0): [10, 11, 12], ("t", 1): [20, 21], ("t", 2): [40], ("u", 0): [30, 31]}


def test_next_positions_of_one_partition_and_of_several() -> None:
    assert origins([("t", 3)] * 3, [5, 6, 9]).next_positions() == {("t", 3): 10}
    mixed = origins([("t", 0), ("u", 0), ("t", 0)], [1, 7, 2])
    assert mixed.next_positions() == {("t", 0): 3, ("u", 0): 8}
    assert origins([], []).next_positions() == {}
