"""Benchmark: the per-message floor of a Kafka source -- what confluent-kafka's ``consume``
costs a message, and what kyma's polling thread adds to each polled round.

    python bench/kafka_floor.py [--messages 100000] [--repeat 5]

``--messages`` bench/kafka.py messages on a 3-partition topic of the test broker (tansu, in
memory, on loopback), produced before anything is timed. Each variant reads all of them with
a fresh consumer assigned every partition, best of ``--repeat``, in CPU µs a message of this
process (the broker's own CPU not included; librdkafka's fetch threads are):
``poll()`` one message at a time, and ``consume(n)`` for several ``n``. Then kyma's reads of a
polled round of ``consume(10 000)`` (the source's polling thread, ``ingest/kafka/_batch``):
the error check, the byte count, the origin columns (topic, partition, offset), and the
NDJSON body (one join, two byte counts). The floor a message is ``consume`` plus those reads:
no Kafka source in Python can read a message for less with this client, which hands over
one ``Message`` object per message and has no call returning a round's payloads as one buffer.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from kafka import PARTITIONS, TOPIC, produce

from kyma.ingest.kafka._batch import Origins, build_body

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from kafka_broker import KafkaBroker  # noqa: E402  (test infrastructure)


def read_all(broker: KafkaBroker, messages: int, take: Callable[[Consumer], list]) -> list:
    """Every message (but the first, read before the clock starts) with ``take``: the
    polled rounds, and CPU seconds spent."""
    consumer = Consumer(broker.config(**{"group.id": "floor", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    first = consumer.consume(1, timeout=5.0)  # connected and fetching before the clock starts
    rounds, seen = [], len(first)
    deadline = time.monotonic() + 300
    cpu = time.process_time()
    while seen < messages and time.monotonic() < deadline:
        got = take(consumer)
        seen += len(got)
        rounds.append(got)
    cpu = time.process_time() - cpu
    consumer.close()
    return [rounds, cpu]


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

    variants: dict[str, Callable[[Consumer], list]] = {"poll()": poll_one}
    for size in (1_000, 10_000, 50_000):
        variants[f"consume({size:,})"] = lambda c, size=size: c.consume(size, timeout=1.0)
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=PARTITIONS)
        produce(broker, n)
        best: dict[str, float] = {}
        kept: list = []
        for _ in range(args.repeat):
            for label, take in variants.items():
                rounds, cpu = read_all(broker, n, take)
                read = sum(map(len, rounds))
                best[label] = min(best.get(label, 1e9), cpu / read * 1e6)
                if label == "consume(10,000)":
                    kept = rounds
        reads = reads_of(kept, args.repeat)
    print(f"| step | CPU µs a message (best of {args.repeat}) |")
    print("|---|---|")
    for label, micros in {**best, **reads}.items():
        print(f"| {label} | {micros:.2f} |")
    floor = best["consume(10,000)"] + sum(reads.values())
    print(
        f"floor a message (consume(10 000) and kyma's reads): {floor:.2f} µs;"
        f" load {os.getloadavg()[0]:.1f}"
    )


def reads_of(rounds: list, repeat: int) -> dict[str, float]:
    """CPU µs a message of the polling thread's reads of each polled round, best of ``repeat``."""
    count = sum(map(len, rounds))
    steps: dict[str, Callable[[list], object]] = {
        "error check (`any(map(Message.error, …))`)": lambda r: any(map(type(r[0]).error, r)),
        "bytes (`sum(map(len, …))`)": lambda r: sum(map(len, r)),
        "origins (topic, partition, offset columns)": Origins.of,
        "NDJSON body (values, one join, byte counts)": lambda r: build_body(r, None),
    }
    best: dict[str, float] = {}
    for label, step in steps.items():
        for _ in range(repeat):
            cpu = time.process_time()
            for polled in rounds:
                if polled:
                    step(polled)
            micros = (time.process_time() - cpu) / count * 1e6
            best[label] = min(best.get(label, 1e9), micros)
    return best


if __name__ == "__main__":
    main()
