"""Two ``kyma kafka-consume`` workers share a source's partitions through its consumer group.

A second worker joining takes some partitions over, the first leaving hands them all to the
second; each move claims the partitions again in the catalog, and no message is read twice.
"""

from __future__ import annotations

import json
import re
import time
import uuid

from consumers import ConsumeWorker
from kafka_broker import GROUP_TIMINGS

PARTITIONS = 4
WAIT = 60.0


def assignments(worker: ConsumeWorker) -> list[set[int]]:
    """Every assignment the worker logged, in order, as sets of partitions."""
    lines = [line for line in worker.output.splitlines() if ": assigned " in line]
    return [{int(p) for p in re.findall(r"\[(\d+)\]@", line)} for line in lines]


def wait_until(condition, what: str, *workers: ConsumeWorker) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    logs = "\n".join(w.output for w in workers)
    raise AssertionError(f"not {what} after {WAIT}s:\n{logs}")


def test_two_workers_split_the_partitions_and_hand_them_over(
    services, kafka_broker, tmp_path
) -> None:
    topic = f"shared-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    services.query.execute("CREATE TABLE numbers (n long)")
    services.sources.create(
        {
            "name": "numbers_src",
            "type": "kafka",
            "table": "numbers",
            "kafka": {
                "bootstrap_servers": kafka_broker.bootstrap,
                "topics": [topic],
                "group_id": f"g-{topic}",
                **{k: str(v) for k, v in GROUP_TIMINGS.items()},
            },
            "batch": {"max_rows": 100, "max_latency_ms": 100},
        }
    )

    def rows() -> int:
        answer = services.query.execute("SELECT count(*) AS n FROM numbers")
        return answer.table.to_pylist()[0]["n"]

    def produce(start: int) -> None:
        values = [json.dumps({"n": n}).encode() for n in range(start, start + 400)]
        kafka_broker.produce(topic, values, spread=PARTITIONS)

    everything = set(range(PARTITIONS))
    where = (services.catalog.url, tmp_path / "objects")
    first = ConsumeWorker("numbers_src", *where)
    second = None
    try:
        wait_until(lambda: everything in assignments(first), "all assigned to one", first)
        produce(0)
        wait_until(lambda: rows() == 400, "400 rows", first)

        second = ConsumeWorker("numbers_src", *where)

        def split() -> bool:
            mine, theirs = assignments(first)[-1:], assignments(second)[-1:]
            return bool(mine and theirs and mine[0] and theirs[0]) and (
                mine[0] | theirs[0] == everything and not mine[0] & theirs[0]
            )

        wait_until(split, "split between the two", first, second)
        produce(400)
        wait_until(lambda: rows() == 800, "800 rows", first, second)

        first.stop()
        wait_until(lambda: assignments(second)[-1] == everything, "handed over", second)
        produce(800)
        wait_until(lambda: rows() == 1200, "1200 rows", second)
    finally:
        first.stop()
        if second is not None:
            second.stop()
    answer = services.query.execute(
        "SELECT count(*) AS rows, count(DISTINCT n) AS numbers,"
        " count(DISTINCT (_kafka_partition, _kafka_offset)) AS origins FROM numbers"
    )
    assert answer.table.to_pylist() == [{"rows": 1200, "numbers": 1200, "origins": 1200}]
    epochs = {
        p.partition: p.epoch for p in services.stores.sources.positions.positions("numbers_src")
    }
    assert set(epochs) == everything
    assert all(epoch >= 3 for epoch in epochs.values()), epochs  # alone, shared, alone again
