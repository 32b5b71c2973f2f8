"""Committing threads: batches written at once, each partition's committed in the order
polled; a polled round read into one body with its origins."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from kyma.ingest.kafka._batch import Origins, RoundReader, read_round
from kyma.ingest.kafka._lanes import Lanes, Turn

WAIT = 30.0


@dataclass
class Batch:
    name: str
    keys: frozenset = field(default_factory=frozenset)
    written: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def until(what: str, ready) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while not ready():
        assert time.monotonic() < deadline, f"not after {WAIT}s: {what}"
        time.sleep(0.01)


class Recorder:
    """A ``write`` that logs when each batch starts, reaches its turn and ends; it is written
    once ``written`` is set and commits once ``release`` is."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.turns: list[str] = []
        self.gave_up: list[str] = []
        self.ended: list[str] = []

    def __call__(self, batch: Batch, turn: Turn) -> None:
        self.started.append(batch.name)
        assert batch.written.wait(WAIT)
        if not turn():
            self.gave_up.append(batch.name)
            return
        self.turns.append(batch.name)
        assert batch.release.wait(WAIT)
        self.ended.append(batch.name)


def test_batches_are_written_at_once_and_each_partition_commits_in_order() -> None:
    write = Recorder()
    lanes: Lanes[Batch] = Lanes(3, 10, write, "t")
    stop = threading.Event()
    a1, a2 = Batch("a1", frozenset({"a"})), Batch("a2", frozenset({"a", "c"}))
    b1, c1 = Batch("b1", frozenset({"b"})), Batch("c1", frozenset({"c"}))
    batches = (a1, a2, b1, c1)
    try:
        for batch in batches:
            assert lanes.put(batch, stop)
        until("three written at once", lambda: write.started == ["a1", "a2", "b1"])
        assert lanes.waiting == 1 and not lanes.free
        a2.written.set()
        b1.written.set()
        until("b1 commits before a1: no partition in common", lambda: write.turns == ["b1"])
        time.sleep(0.1)
        assert write.turns == ["b1"]  # a2 waits for a1 (partition a)
        b1.release.set()
        until("c1 taken by the freed lane", lambda: write.started[-1:] == ["c1"])
        c1.written.set()
        a1.written.set()
        until("a1's turn", lambda: write.turns == ["b1", "a1"])
        time.sleep(0.1)
        assert write.turns == ["b1", "a1"]  # c1 waits for a2 (partition c)
        a1.release.set()
        until("a2 after a1", lambda: write.turns == ["b1", "a1", "a2"])
        a2.release.set()
        c1.release.set()
        assert lanes.idle(stop)
        assert write.ended == ["b1", "a1", "a2", "c1"] and lanes.free
    finally:
        for batch in batches:
            batch.written.set()
            batch.release.set()
        lanes.close()


def test_closing_lets_a_commit_finish_and_the_batches_behind_it_give_up() -> None:
    write = Recorder()
    lanes: Lanes[Batch] = Lanes(2, 10, write, "t")
    stop = threading.Event()
    first, second = Batch("first", frozenset({"a"})), Batch("second", frozenset({"a"}))
    third = Batch("third", frozenset({"a"}))
    try:
        for batch in (first, second, third):
            assert lanes.put(batch, stop)
        first.written.set()
        second.written.set()
        until("first at its turn", lambda: write.turns == ["first"])
        closing = threading.Thread(target=lanes.close)
        closing.start()
        until("second gave up", lambda: write.gave_up == ["second"])
        first.release.set()
        closing.join(WAIT)
        assert write.ended == ["first"] and write.started == ["first", "second"]
    finally:
        for batch in (first, second, third):
            batch.written.set()
            batch.release.set()
        lanes.close()


def test_put_blocks_at_capacity_and_a_failure_stops_every_lane() -> None:
    def write(batch: Batch, turn: Turn) -> None:
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


class Message:
    """The accessors a round reads, as confluent_kafka's Message has them."""

    def __init__(self, value: bytes | None, topic: str, partition: int, offset: int) -> None:
        self._value, self._topic, self._partition, self._offset = value, topic, partition, offset

    def value(self) -> bytes | None:
        return self._value

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


def origins(pairs: list[tuple[str, int]], offsets: list[int]) -> Origins:
    messages = [Message(b"{}", t, p, o) for (t, p), o in zip(pairs, offsets, strict=True)]
    return read_round(messages, False)[1]


def test_next_positions_of_one_partition_and_of_several() -> None:
    assert origins([("t", 3)] * 3, [5, 6, 9]).next_positions() == {("t", 3): 10}
    mixed = origins([("t", 0), ("u", 0), ("t", 0), ("u", 1)], [1, 7, 2, 4])
    assert mixed.next_positions() == {("t", 0): 3, ("u", 0): 8, ("u", 1): 5}
    assert read_round([], True)[1].next_positions() == {}


def test_a_round_of_one_line_objects_is_joined_with_its_origins() -> None:
    messages = [
        Message(b'{"n": 1}', "t", 0, 10),
        Message(b'{"n": 2}', "u", 2, 7),
        Message(b'{"n": 3}', "t", 1, 11),
    ]
    body, found = read_round(messages, True)
    assert body.ndjson == b'{"n": 1}\n{"n": 2}\n{"n": 3}' and body.owner(3) == 2
    assert {k: v.to_pylist() for k, v in body.columns.items()} == {
        "_kafka_topic": ["t", "u", "t"],
        "_kafka_partition": [0, 2, 1],
        "_kafka_offset": [10, 7, 11],
    }
    assert found.topics == ["t", "u"] and found.topic_codes.tolist() == [0, 1, 0]
    assert read_round(messages, False)[0].columns == {}


def test_tombstones_and_ndjson_messages_give_their_lines_and_owners() -> None:
    messages = [
        Message(b'{"n": 1}', "t", 0, 0),
        Message(None, "t", 0, 1),  # a tombstone
        Message(b'{"n": 2}\n\n{"n": 3}\n', "t", 0, 2),
        Message(b"  ", "t", 0, 3),
        Message(b' {"n": 4}', "t", 0, 4),
    ]
    body, found = read_round(messages, True)
    assert body.ndjson == b'{"n": 1}\n{"n": 2}\n{"n": 3}\n {"n": 4}'
    assert [body.owner(line) for line in (1, 2, 3, 4)] == [0, 2, 2, 4]
    assert body.columns["_kafka_offset"].to_pylist() == [0, 2, 2, 4]
    assert found.offsets.dtype == np.int64 and found.next_positions() == {("t", 0): 5}
    assert [body.value(i) for i in (0, 2, 4)] == [b'{"n": 1}', messages[2].value(), b' {"n": 4}']
    less = body.without(2)
    assert less.ndjson == b'{"n": 1}\n {"n": 4}' and [less.owner(i) for i in (1, 2)] == [0, 4]
    assert less.columns["_kafka_offset"].to_pylist() == [0, 4] and less.value(4) == b' {"n": 4}'
    assert body.without(4).ndjson == b'{"n": 1}\n{"n": 2}\n{"n": 3}'
    assert body.without(0).without(2).without(4).ndjson == b""


def test_a_round_read_call_by_call_keeps_the_message_numbers_and_topics() -> None:
    reader = RoundReader(True)
    reader.add([Message(b'{"n": 1}', "t", 0, 5), Message(b'{"n": 2}', "u", 0, 9)])
    reader.add([])
    reader.add([Message(None, "u", 0, 10), Message(b'{"n": 3}', "t", 1, 3)])
    assert reader.rows == 4 and reader.size == 24
    [(body, found)] = reader.finish()
    assert body.ndjson == b'{"n": 1}\n{"n": 2}\n{"n": 3}' and body.owner(3) == 3
    assert found.topics == ["t", "u"] and found.of(2) == ("u", 0, 10)
    assert body.columns["_kafka_topic"].to_pylist() == ["t", "u", "t"]
    assert found.next_positions() == {("t", 0): 6, ("u", 0): 11, ("t", 1): 4}
    halves = reader.finish(2)
    assert [h[0].ndjson for h in halves] == [b'{"n": 1}\n{"n": 2}', b'{"n": 3}']
    assert halves[1][0].owner(1) == 1 and halves[1][1].next_positions() == {
        ("u", 0): 11,
        ("t", 1): 4,
    }
    assert halves[1][0].columns["_kafka_offset"].to_pylist() == [3]
    one_line = read_round([Message(b'{"a": 1}', "t", 0, i) for i in range(3)], False)[0]
    assert one_line.without(1).ndjson == b'{"a": 1}\n{"a": 1}' and one_line.value(2) == b'{"a": 1}'
    assert one_line.without(0).owner(1) == 1 and one_line.without(2).ndjson.count(b"\n") == 1
