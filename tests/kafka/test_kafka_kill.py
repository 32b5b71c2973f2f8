"""kill -9 of ``kyma kafka-consume`` during a stream: every message lands exactly once.

A producer streams numbered messages into a 3-partition topic while workers are killed:
some by kill -9 from outside at a random moment, some by a crash point at the two moments
that matter most (extents written but not committed; catalog committed but Kafka's offsets
not). A last worker drains the topic; then every number must be in the table once, and
every (partition, offset) too.

The negative control runs the same kills with ``delivery: at_least_once``, where the catalog
keeps no positions: it must find duplicates, so the check above is one that can fail.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid

from consumers import ConsumeWorker
from kafka_broker import GROUP_TIMINGS, KafkaBroker

MESSAGES = 3_000
CHUNK = 100
PARTITIONS = 3
DRAIN_SECONDS = 90.0
# Each round starts a worker and ends it: None is a kill -9 from outside at a random moment.
ROUNDS = ("kafka.catalog_committed:2", None, "write.extents_written:2", None, None)


def stream(broker: KafkaBroker, topic: str, done: threading.Event) -> None:
    """Numbered messages, a chunk at a time, spread over the partitions."""
    try:
        for start in range(0, MESSAGES, CHUNK):
            values = [json.dumps({"n": n}).encode() for n in range(start, start + CHUNK)]
            broker.produce(topic, values, spread=PARTITIONS)
            time.sleep(0.2)
    finally:
        done.set()


def kill_and_drain(services, broker: KafkaBroker, tmp_path, delivery: str) -> list:  # type: ignore[no-untyped-def]
    """Run the kill rounds, then a worker until every number arrived; the table's counts."""
    seed = int(os.environ.get("KYMA_TEST_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    topic = f"kill-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=PARTITIONS)
    services.query.execute("CREATE TABLE numbers (n long)")
    services.sources.create(
        {
            "name": "numbers_src",
            "type": "kafka",
            "table": "numbers",
            "delivery": delivery,
            "kafka": {
                "bootstrap_servers": broker.bootstrap,
                "topics": [topic],
                "group_id": f"g-{topic}",
                **{k: str(v) for k, v in GROUP_TIMINGS.items()},
            },
            "batch": {"max_rows": 150, "max_latency_ms": 100},
        }
    )
    produced = threading.Event()
    producer = threading.Thread(target=stream, args=(broker, topic, produced))
    producer.start()
    start = (services.catalog.url, tmp_path / "objects")
    try:
        for crash_at in ROUNDS:
            worker = ConsumeWorker("numbers_src", *start, crash_at=crash_at)
            if crash_at is None:
                time.sleep(rng.uniform(1.0, 3.0))
                worker.kill()
            else:
                code = worker.wait_for_own_death(timeout=60)
                assert code == -9, f"seed {seed}: {crash_at} exited {code}:\n{worker.output}"
        last = ConsumeWorker("numbers_src", *start)
        try:
            producer.join(timeout=120)
            deadline = time.monotonic() + DRAIN_SECONDS
            while time.monotonic() < deadline:
                counts = table_counts(services)
                if counts[1] == MESSAGES:
                    break
                time.sleep(0.5)
            time.sleep(1.0)  # a duplicate committed late would show now
        finally:
            last.stop()
    finally:
        producer.join(timeout=120)
    counts = table_counts(services)
    assert counts[1] == MESSAGES, f"seed {seed}: {counts} after {DRAIN_SECONDS}s:\n{last.output}"
    return counts


def table_counts(services) -> list:  # type: ignore[no-untyped-def]
    """[rows, distinct numbers, distinct (partition, offset), min, max]."""
    answer = services.query.execute(
        "SELECT count(*) AS rows, count(DISTINCT n) AS numbers,"
        " count(DISTINCT (_kafka_partition, _kafka_offset)) AS origins,"
        " min(n) AS low, max(n) AS high FROM numbers"
    )
    return list(answer.table.to_pylist()[0].values())


def test_kill_9_mid_stream_loses_nothing_and_duplicates_nothing(
    services, kafka_broker, tmp_path
) -> None:
    rows, numbers, origins, low, high = kill_and_drain(
        services, kafka_broker, tmp_path, "exactly_once"
    )
    assert (rows, numbers, origins) == (MESSAGES, MESSAGES, MESSAGES)
    assert (low, high) == (0, MESSAGES - 1)
    positions = services.stores.sources.positions.positions("numbers_src")
    assert sum(p.position for p in positions) == MESSAGES  # offsets 0.. on each partition
    assert all(p.epoch > 1 for p in positions), "every partition changed owners"


def test_negative_control_without_catalog_positions_duplicates_show(
    services, kafka_broker, tmp_path
) -> None:
    rows, numbers, origins, _, _ = kill_and_drain(services, kafka_broker, tmp_path, "at_least_once")
    assert numbers == origins == MESSAGES, "at least once still loses nothing"
    assert rows > MESSAGES, "the crash after the catalog commit must re-read a batch"
    status = services.sources.status("numbers_src")  # positions are the group's, in Kafka
    assert status["delivery"] == "at_least_once"
    assert sum(p["position"] for p in status["partitions"]) == MESSAGES
