"""kill -9 of ``kyma kafka-consume`` during a stream: every message lands exactly once.

A producer streams numbered messages into a 3-partition topic while workers are killed:
some by kill -9 from outside at a random moment, some by a crash point at the two moments
that matter most (extents written but not committed; catalog committed but Kafka's offsets
not). A last worker drains the topic; then every number must be in the table once, and
every (partition, offset) too.

The negative control runs the same kills with ``delivery: at_least_once``, where the catalog
keeps no positions: it must find duplicates, so the check above is one that can fail.

Each restarted worker must also resume quickly: from its "running" line to the first
position it commits, while messages wait for it (``RESUME_SECONDS``).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid

from consumers import ConsumeWorker
from kafka_broker import KafkaBroker

MESSAGES = 3_000
CHUNK = 100
PARTITIONS = 3
DRAIN_SECONDS = 90.0
# Each round starts a worker and ends it: None is a kill -9 from outside at a random moment.
ROUNDS = ("kafka.catalog_committed:2", None, "write.extents_written:2", None, None)
# Direct assignment resumes in under 0.5 s here (claim, fetch, a 100 ms batch, a commit); the
# rest is margin for a loaded 2-core machine. Through the consumer group a restarted worker
# waited for the join: on tansu half the session timeout (23 s or more at the default 45 s).
RESUME_SECONDS = 5.0


def stream(broker: KafkaBroker, topic: str, rounds_over: threading.Event, sent: list[int]) -> None:
    """Numbered messages, a chunk at a time, spread over the partitions, until the kill
    rounds are over (every worker has messages to read) and at least ``MESSAGES`` went."""
    start = 0
    while start < MESSAGES or not rounds_over.is_set():
        values = [json.dumps({"n": n}).encode() for n in range(start, start + CHUNK)]
        broker.produce(topic, values, spread=PARTITIONS)
        start += CHUNK
        sent[0] = start
        rounds_over.wait(0.2)


def committed(services, delivery: str) -> int:  # type: ignore[no-untyped-def]
    """The sum of the source's committed positions."""
    if delivery == "exactly_once":  # the catalog's positions: cheap to read often
        return sum(p.position for p in services.stores.sources.positions.positions("numbers_src"))
    return sum(p["position"] for p in services.sources.status("numbers_src")["partitions"])


class Resume:
    """How soon a worker commits after its "running" line, when messages wait for it."""

    def __init__(self, services, delivery: str) -> None:  # type: ignore[no-untyped-def]
        # Read before the worker starts: its first commit may come before a status would.
        status = services.sources.status("numbers_src")
        self.before = sum(p["position"] for p in status["partitions"])
        self.waiting = sum(p["lag"] or 0 for p in status["partitions"]) > 0
        self.services, self.delivery = services, delivery

    def seconds(self, worker: ConsumeWorker) -> float | None:
        """None when nothing waited (every message produced so far was committed)."""
        worker.wait_for_output("kyma kafka-consume: running")
        ready = time.monotonic()
        if not self.waiting:
            return None
        while time.monotonic() < ready + 30 and worker.proc.poll() is None:
            if committed(self.services, self.delivery) > self.before:
                return time.monotonic() - ready
            time.sleep(0.05)
        if committed(self.services, self.delivery) > self.before:  # then it crashed
            return time.monotonic() - ready
        if worker.proc.poll() == -9:
            # It died at its crash point, so it had read and written a batch: with two
            # writers the second batch's crash point can come before the first's commit.
            return time.monotonic() - ready
        worker.kill()
        raise AssertionError(f"no commit within 30 s of starting:\n{worker.output}")


def kill_and_drain(services, broker: KafkaBroker, tmp_path, delivery: str) -> tuple[list, list]:  # type: ignore[no-untyped-def]
    """Run the kill rounds, then a worker until every number arrived; the table's counts
    and how long each restarted worker took to resume (those that had something to read)."""
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
                "group_id": f"g-{topic}",  # librdkafka's session timeout (45 s), as a user's
            },
            "batch": {"max_rows": 150, "max_latency_ms": 100},
        }
    )
    rounds_over, sent = threading.Event(), [0]
    producer = threading.Thread(target=stream, args=(broker, topic, rounds_over, sent))
    producer.start()
    start = (services.catalog.url, tmp_path / "objects")
    resumes: list[float] = []

    def started(crash_at: str | None = None) -> ConsumeWorker:
        resume = Resume(services, delivery)
        worker = ConsumeWorker("numbers_src", *start, crash_at=crash_at)
        seconds = resume.seconds(worker)
        if seconds is not None:
            resumes.append(seconds)
        return worker

    try:
        for crash_at in ROUNDS:
            worker = started(crash_at)
            if crash_at is None:
                time.sleep(rng.uniform(0.5, 2.0))
                worker.kill()
            else:
                code = worker.wait_for_own_death(timeout=60)
                assert code == -9, f"seed {seed}: {crash_at} exited {code}:\n{worker.output}"
        last = started()
        try:
            rounds_over.set()
            producer.join(timeout=120)
            deadline = time.monotonic() + DRAIN_SECONDS
            while time.monotonic() < deadline:
                counts = table_counts(services)
                if counts[1] == sent[0]:
                    break
                time.sleep(0.5)
            time.sleep(1.0)  # a duplicate committed late would show now
        finally:
            last.stop()
    finally:
        rounds_over.set()
        producer.join(timeout=120)
    counts = table_counts(services)
    assert counts[1] == sent[0], f"seed {seed}: {counts} after {DRAIN_SECONDS}s:\n{last.output}"
    return [*counts, sent[0]], resumes


def assert_quick_resumes(resumes: list[float]) -> None:
    # At least the worker after the crash between extents and commit had messages waiting.
    assert resumes, "no restarted worker had anything to read"
    assert max(resumes) <= RESUME_SECONDS, f"resume seconds per restart: {resumes}"


def table_counts(services) -> list:  # type: ignore[no-untyped-def]
    """[rows, distinct numbers, distinct (partition, offset), min, max]."""
    answer = services.query.execute(
        "SELECT count(*) AS rows, count(DISTINCT n) AS numbers,"
        " (SELECT count(*) FROM (SELECT DISTINCT _kafka_partition, _kafka_offset"
        " FROM numbers)) AS origins,"
        " min(n) AS low, max(n) AS high FROM numbers"
    )
    return list(answer.table.to_pylist()[0].values())


def test_kill_9_mid_stream_loses_nothing_and_duplicates_nothing(
    services, kafka_broker, tmp_path
) -> None:
    (rows, numbers, origins, low, high, sent), resumes = kill_and_drain(
        services, kafka_broker, tmp_path, "exactly_once"
    )
    assert_quick_resumes(resumes)
    assert (rows, numbers, origins) == (sent, sent, sent)
    assert (low, high) == (0, sent - 1)
    positions = services.stores.sources.positions.positions("numbers_src")
    assert sum(p.position for p in positions) == sent  # offsets 0.. on each partition
    assert all(p.epoch > 1 for p in positions), "every partition changed owners"


def test_negative_control_without_catalog_positions_duplicates_show(
    services, kafka_broker, tmp_path
) -> None:
    (rows, numbers, origins, _, _, sent), resumes = kill_and_drain(
        services, kafka_broker, tmp_path, "at_least_once"
    )
    assert_quick_resumes(resumes)
    assert numbers == origins == sent, "at least once still loses nothing"
    assert rows > sent, "the crash after the catalog commit must re-read a batch"
    status = services.sources.status("numbers_src")  # positions are the group's, in Kafka
    assert status["delivery"] == "at_least_once"
    assert sum(p["position"] for p in status["partitions"]) == sent
