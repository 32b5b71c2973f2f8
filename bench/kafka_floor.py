"""Benchmark: the per-message floor of a Kafka source -- what confluent-kafka's ``consume``
costs a message, and what kyma's polling thread adds to it.

    python bench/kafka_floor.py [--messages 100000] [--repeat 5]

``--messages`` bench/kafka.py messages on a 3-partition topic of the test broker (tansu, in
memory, on loopback), produced before anything is timed. Each variant reads all of them with
a fresh consumer assigned every partition, best of ``--repeat``, in CPU µs a message of this
process (the broker's own CPU not included; librdkafka's fetch threads are): ``poll()`` one
message at a time; ``consume(n)`` for several ``n``, every message kept until the end (as a
round of 300 000 would keep them: they are objects Python's garbage collector tracks, and
each full collection traverses them again); and ``consume(10 000)`` as kyma's polling thread
calls it, each call's messages read at once and dropped, the collector paused meanwhile.

Then kyma's reads of a polled round of ``consume(10 000)`` calls (``ingest/kafka/_batch``):
the error check, reading each call's messages (``engine/native/kafka_messages.gather``: the
values joined into the NDJSON body, topic codes, partitions and offsets in one C loop), and
finishing the round (the ``_kafka_*`` columns, each partition's next position). For the
record, the best pure-Python read of the same fields (C-level ``map`` over the message
methods, one join, ``numpy.fromiter``) that the compiled loop replaced.

The floor a message is kyma's ``consume`` and those reads: no Kafka source in Python can
read a message for less with this client, which hands over one ``Message`` object per
message and has no call returning a round's payloads as one buffer.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from confluent_kafka import Consumer, TopicPartition
from kafka import PARTITIONS, TOPIC, produce

from kyma.ingest.kafka._batch import RoundReader

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from kafka_broker import KafkaBroker  # noqa: E402  (test infrastructure)


def read_all(
    broker: KafkaBroker, messages: int, take: Callable[[Consumer], list], keep: bool
) -> tuple[list, int, float]:
    """Every message (but the first, read before the clock starts) with ``take``: the
    polled calls (when ``keep``), how many messages, and CPU seconds spent."""
    consumer = Consumer(broker.config(**{"group.id": "floor", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    first = consumer.consume(1, timeout=5.0)  # connected and fetching before the clock starts
    calls, seen = [], len(first)
    deadline = time.monotonic() + 300
    cpu = time.process_time()
    while seen < messages and time.monotonic() < deadline:
        got = take(consumer)
        seen += len(got)
        if keep:
            calls.append(got)
    cpu = time.process_time() - cpu
    consumer.close()
    return calls, seen - len(first), cpu


def read_and_drop(consumer: Consumer) -> list:
    """kyma's polling thread: a call's messages read at once, the collector paused."""
    gc.disable()
    try:
        got = consumer.consume(10_000, timeout=1.0)
        RoundReader(True).add(got)
        return [None] * len(got)
    finally:
        gc.enable()


def python_reads(messages: list) -> object:
    """The best pure-Python read of a call's messages: values joined, origin arrays."""
    kind = type(messages[0])
    joined = b"\n".join(map(kind.value, messages))
    n = len(messages)
    one_line = joined.count(b"\n") == n - 1 and joined.count(b"\n{") == n - 1
    topics = set(map(kind.topic, messages))
    return (
        one_line,
        topics,
        np.fromiter(map(kind.partition, messages), np.int32, n),
        np.fromiter(map(kind.offset, messages), np.int64, n),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.messages
    print(f"messages={n:,}; {platform.node()} {platform.machine()}; load {os.getloadavg()[0]:.1f}")

    def poll_one(consumer: Consumer) -> list:
        message = consumer.poll(1.0)
        return [] if message is None else [message]

    variants: dict[str, tuple[Callable[[Consumer], list], bool]] = {"poll()": (poll_one, True)}
    for size in (1_000, 10_000, 50_000):
        variants[f"consume({size:,}), kept"] = (
            lambda c, size=size: c.consume(size, timeout=1.0),
            True,
        )
    variants["consume(10,000), read and dropped (kyma)"] = (read_and_drop, False)
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=PARTITIONS)
        produce(broker, n)
        best: dict[str, float] = {}
        kept: list = []
        for _ in range(args.repeat):
            for label, (take, keep) in variants.items():
                calls, read, cpu = read_all(broker, n, take, keep)
                best[label] = min(best.get(label, 1e9), cpu / read * 1e6)
                if label == "consume(10,000), kept":
                    kept = calls
        reads = reads_of(kept, args.repeat)
    print(f"| step | CPU µs a message (best of {args.repeat}) |")
    print("|---|---|")
    for label, micros in {**best, **reads}.items():
        print(f"| {label} | {micros:.2f} |")
    kyma = best["consume(10,000), read and dropped (kyma)"]  # the compiled read included
    floor = kyma + reads["error check"] + reads["finish the round"]
    print(
        f"floor a message (kyma's consume, reads included, and the rest of its round):"
        f" {floor:.2f} µs; load {os.getloadavg()[0]:.1f}"
    )


def reads_of(calls: list, repeat: int) -> dict[str, float]:
    """CPU µs a message of the polling thread's reads of each call's messages, and of
    finishing the round, best of ``repeat``."""
    count = sum(map(len, calls))
    calls = [c for c in calls if c]
    best: dict[str, float] = {}

    def timed(label: str, run: Callable[[], object]) -> None:
        for _ in range(repeat):
            cpu = time.process_time()
            run()
            best[label] = min(best.get(label, 1e9), (time.process_time() - cpu) / count * 1e6)

    def error_check() -> None:
        for c in calls:
            any(map(type(c[0]).error, c))

    reader = RoundReader(True)

    def read() -> None:
        nonlocal reader
        reader = RoundReader(True)
        for c in calls:
            reader.add(c)

    def python() -> None:
        for c in calls:
            python_reads(c)

    timed("error check", error_check)
    timed("read (compiled gather)", read)
    timed("finish the round", lambda: [o.next_positions() for _, o in reader.finish()])
    timed("read (best pure Python, for the record)", python)
    return best


if __name__ == "__main__":
    main()
