"""Polling runs ahead of writing, rounds are written side by side and committed in order,
and a fenced batch takes the batches polled after it along.

The catalog's row lock on a partition's position holds one batch's commit while the test
watches the next batch being polled and written; then a newer worker's claim fences the
held batch.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid

import psycopg
from confluent_kafka import Producer
from kafka_broker import GROUP_TIMINGS, KafkaBroker

from kyma.ingest.kafka import KafkaWorker, parse_kafka_spec, prepare_table
from kyma.ingest.kafka._client_log import RateLimit

WAIT = 60.0


def produce_to(broker: KafkaBroker, topic: str, partition: int, numbers: range) -> None:
    producer = Producer(broker.config())
    for n in numbers:
        producer.produce(topic, json.dumps({"n": n}).encode(), partition=partition)
    assert producer.flush(30) == 0


def wait(what: str, ready) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while not ready():
        assert time.monotonic() < deadline, f"not after {WAIT}s: {what}"
        time.sleep(0.05)


def held(conn: psycopg.Connection) -> int:
    """How many sessions of the catalog's database wait for a lock (the worker's commits)."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchone()
    return int(row[0]) if row else 0


def started(services, broker: KafkaBroker, table: str, batch: dict):  # type: ignore[no-untyped-def]
    """A worker of a new source on a new 2-partition topic into ``table`` (n long), running
    on a thread: (spec, worker, its thread, its stop event, the position store, topic)."""
    topic = f"{table}-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=2)
    spec = parse_kafka_spec(
        {
            "name": f"{table}_src",
            "type": "kafka",
            "table": table,
            "kafka": {
                "bootstrap_servers": broker.bootstrap,
                "topics": [topic],
                "group_id": f"g-{topic}",
                **{k: str(v) for k, v in GROUP_TIMINGS.items()},
            },
            "batch": {"max_latency_ms": 100, **batch},
        }
    )
    services.query.execute(f"CREATE TABLE {table} (n long)")
    prepare_table(spec, services.catalog)
    positions = services.stores.sources.positions
    worker = KafkaWorker(spec, services.catalog, positions, services.write_path)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,))
    thread.start()
    return spec, worker, thread, stop, positions, topic


def test_polling_overlaps_a_commit_and_a_fence_drops_what_was_polled_after(
    services, kafka_broker: KafkaBroker
) -> None:
    spec, worker, thread, stop, positions, topic = started(
        services, kafka_broker, "clicks", {"max_rows": 1000}
    )
    try:
        wait("both partitions claimed", lambda: len(positions.positions(spec.name)) == 2)
        with psycopg.connect(positions.db.url) as newer:  # a newer worker takes partition 0
            newer.execute(
                "UPDATE kyma.source_positions SET epoch = epoch + 1"
                " WHERE source = %s AND partition = 0",
                (spec.name,),
            )  # ... and holds the row: the worker's commit waits on it
            produce_to(kafka_broker, topic, 0, range(0, 10, 2))
            produce_to(kafka_broker, topic, 1, range(1, 10, 2))
            with psycopg.connect(positions.db.url, autocommit=True) as watch:
                lanes = worker._lanes
                wait("a batch of partition 0 held", lambda: held(watch) and not lanes.waiting)
            produce_to(kafka_broker, topic, 1, range(10, 20))
            wait("the next batch polled and taken meanwhile", lambda: lanes.writing == 2)
            newer.commit()
        # Partition 0 is the newer worker's; partition 1 is read again from its position.
        wait(
            "partition 1 written",
            lambda: [p.position for p in positions.positions(spec.name)][1:] == [15],
        )
        time.sleep(0.5)  # anything written twice or past a gap would show by now
    finally:
        stop.set()
        thread.join(timeout=30)
    assert worker._fences == 1  # the held batch, and the one polled after it dropped unseen
    rows = services.query.execute("SELECT n FROM clicks ORDER BY n").table.column("n")
    assert rows.to_pylist() == [*range(1, 10, 2), *range(10, 20)]
    assert [p.position for p in positions.positions(spec.name)] == [0, 15]


def test_the_next_round_is_written_while_a_commit_is_held_and_both_land_once(
    services, kafka_broker: KafkaBroker
) -> None:
    """Partition 0's position row is held: the first round's commit waits on the lock, and
    the second round of the same partition is coerced and its extent written meanwhile
    (its commit waits for the first one's). Once released both land, in order, each
    exactly once."""
    spec, worker, thread, stop, positions, topic = started(
        services, kafka_broker, "taps", {"max_rows": 10, "writers": 2}
    )
    store = services.write_path.store

    def at() -> list[int]:
        return [p.position for p in positions.positions(spec.name)]

    try:
        wait("both partitions claimed", lambda: len(positions.positions(spec.name)) == 2)
        prefix = services.catalog.get_table("taps").path_prefix
        with psycopg.connect(positions.db.url) as other:  # holds partition 0's row
            other.execute(
                "SELECT 1 FROM kyma.source_positions WHERE source = %s AND partition = 0"
                " FOR UPDATE",
                (spec.name,),
            )
            produce_to(kafka_broker, topic, 0, range(0, 20))
            wait("two rounds written, none committed", lambda: len(list(store.list(prefix))) >= 2)
            assert at() == [0, 0]
        wait("both written once released", lambda: at() == [20, 0])
    finally:
        stop.set()
        thread.join(timeout=30)
    assert worker._fences == 0
    rows = services.query.execute("SELECT n FROM taps ORDER BY n").table.column("n")
    assert rows.to_pylist() == [*range(0, 20)]


def test_the_client_log_passes_one_line_per_facility_per_interval() -> None:
    now = [0.0]
    limit = RateLimit(every=30.0, clock=lambda: now[0])

    def record(facility: str) -> logging.LogRecord:
        return logging.LogRecord(
            "kyma.kafka.client.x",
            logging.ERROR,
            "",
            0,
            "%s [%s] %s",
            (facility, "rdkafka#consumer-1", "Connect to ipv4#127.0.0.1:1 failed"),
            None,
        )

    passed = [limit.filter(record("FAIL")) for _ in range(100)]
    assert passed.count(True) == 1 and passed[0]
    assert limit.filter(record("ERROR"))  # another facility has its own allowance
    now[0] = 31.0
    again = record("FAIL")
    assert limit.filter(again)
    assert "99 more like it in the last 30 s" in again.getMessage()
    assert not limit.filter(record("FAIL"))
