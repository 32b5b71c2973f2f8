"""The broker fixture works with the real client kyma uses: produce, assign, commit, subscribe,
restart."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from confluent_kafka import OFFSET_BEGINNING, OFFSET_INVALID, Consumer, TopicPartition
from kafka_broker import GROUP_TIMINGS, KafkaBroker, poll_messages


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@contextmanager
def consumer(broker: KafkaBroker, group: str, **config: object) -> Iterator[Consumer]:
    c = Consumer(broker.config(**{"group.id": group, "enable.auto.commit": False, **config}))
    try:
        yield c
    finally:
        c.close()


def produce_numbered(broker: KafkaBroker, topic: str, count: int, partitions: int) -> dict:
    """Messages "0".."count-1", message n on partition n % partitions; {(p, offset): n}."""
    placed = {}
    for p in range(partitions):
        numbers = range(p, count, partitions)
        spots = broker.produce(topic, [str(n) for n in numbers], partition=p)
        placed.update(zip(spots, numbers, strict=True))
    return placed


def read_from_start(broker: KafkaBroker, topic: str, partitions: int, count: int) -> dict:
    """Every message by assign() from the beginning; fails on a duplicate or an extra one."""
    with consumer(broker, unique("reader")) as c:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        messages = poll_messages(c, count)
        extra = c.consume(10, timeout=0.5)
    assert extra == []
    read = {(m.partition(), m.offset()): int(m.value()) for m in messages}
    assert len(read) == count  # no (partition, offset) twice
    return read


def test_assigned_consumer_reads_every_message_once(kafka_broker: KafkaBroker) -> None:
    topic = unique("numbers")
    kafka_broker.create_topic(topic, partitions=3)
    placed = produce_numbered(kafka_broker, topic, 100, partitions=3)

    assert sorted(placed) == [(p, o) for p in range(3) for o in range(len(range(p, 100, 3)))]
    assert read_from_start(kafka_broker, topic, 3, 100) == placed


def test_committed_offsets_read_back(kafka_broker: KafkaBroker) -> None:
    topic, group = unique("commits"), unique("group")
    kafka_broker.create_topic(topic, partitions=3)
    produce_numbered(kafka_broker, topic, 30, partitions=3)
    offsets = [TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 10)]

    with consumer(kafka_broker, group) as c:
        c.commit(offsets=offsets, asynchronous=False)
    with consumer(kafka_broker, group) as c:
        back = c.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)

    assert [(tp.partition, tp.offset) for tp in back] == [(0, 4), (1, 10), (2, OFFSET_INVALID)]


def wait_for_assignments(consumers: list[Consumer], partitions: int, timeout: float) -> float:
    """Poll until the consumers hold disjoint assignments covering every partition."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        for c in consumers:
            c.poll(0.05)
        held = [tp.partition for c in consumers for tp in c.assignment()]
        if sorted(held) == list(range(partitions)) and all(c.assignment() for c in consumers):
            return time.monotonic() - start
    raise AssertionError(
        f"no full assignment after {timeout}s: {[c.assignment() for c in consumers]}"
    )


def test_subscribe_gets_partitions_and_rebalances(kafka_broker: KafkaBroker) -> None:
    topic, group = unique("subscribed"), unique("group")
    kafka_broker.create_topic(topic, partitions=3)
    config = {**GROUP_TIMINGS, "auto.offset.reset": "earliest"}

    with consumer(kafka_broker, group, **config) as first:
        first.subscribe([topic])
        joined = wait_for_assignments([first], 3, timeout=60)
        # Produced only now, so that no poll above has taken a message.
        placed = produce_numbered(kafka_broker, topic, 30, partitions=3)
        messages = poll_messages(first, 30)
        assert {(m.partition(), m.offset()): int(m.value()) for m in messages} == placed

        with consumer(kafka_broker, group, **config) as second:
            second.subscribe([topic])
            rebalanced = wait_for_assignments([first, second], 3, timeout=60)

    print(f"\nsubscribe() to assignment: {joined:.2f}s; second member: {rebalanced:.2f}s")


def test_restart_in_memory_forgets_everything() -> None:
    with KafkaBroker() as broker:
        topic, group = unique("fleeting"), unique("group")
        broker.create_topic(topic, partitions=1)
        broker.produce(topic, ["a", "b"])
        with consumer(broker, group) as c:
            c.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)

        broker.restart()

        assert topic not in broker.topics()
        with consumer(broker, group) as c:
            [back] = c.committed([TopicPartition(topic, 0)], timeout=10)
        assert back.offset == OFFSET_INVALID


def test_restart_on_s3_keeps_topics_messages_and_offsets(
    durable_kafka_broker: KafkaBroker,
) -> None:
    broker = durable_kafka_broker
    topic, group = unique("durable"), unique("group")
    broker.create_topic(topic, partitions=3)
    placed = produce_numbered(broker, topic, 30, partitions=3)
    with consumer(broker, group) as c:
        c.commit(offsets=[TopicPartition(topic, 2, 7)], asynchronous=False)

    broker.restart()

    assert broker.topics()[topic] == 3
    assert read_from_start(broker, topic, 3, 30) == placed
    with consumer(broker, group) as c:
        [back] = c.committed([TopicPartition(topic, 2)], timeout=10)
    assert back.offset == 7
    assert broker.produce(topic, ["30"], partition=0) == [(0, 10)]  # offsets carry on
