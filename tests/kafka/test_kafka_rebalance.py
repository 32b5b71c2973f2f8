"""Two ``kyma kafka-consume`` workers on one source.

With ``assignment: group`` they share the partitions through the consumer group: a second
worker joining takes some partitions over, the first leaving hands them all to the second;
each move claims the partitions again in the catalog, and no message is read twice. With
direct assignment (the default) the newer worker takes every partition and the older one,
fenced at its next commit, lets them go.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable

from consumers import ConsumeWorker
from kafka_broker import GROUP_TIMINGS

PARTITIONS = 4
EVERYTHING = set(range(PARTITIONS))
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


def numbers_source(services, kafka_broker, assignment: str) -> Callable[[int], None]:  # type: ignore[no-untyped-def]
    """A source on a fresh topic; what produces 400 numbers from ``start`` into it."""
    topic = f"shared-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=PARTITIONS)
    services.query.execute("CREATE TABLE numbers (n long)")
    services.sources.create(
        {
            "name": "numbers_src",
            "type": "kafka",
            "table": "numbers",
            "assignment": assignment,
            "kafka": {
                "bootstrap_servers": kafka_broker.bootstrap,
                "topics": [topic],
                "group_id": f"g-{topic}",
                **{k: str(v) for k, v in GROUP_TIMINGS.items()},
            },
            "batch": {"max_rows": 100, "max_latency_ms": 100},
        }
    )

    def produce(start: int) -> None:
        values = [json.dumps({"n": n}).encode() for n in range(start, start + 400)]
        kafka_broker.produce(topic, values, spread=PARTITIONS)

    return produce


def rows(services) -> int:  # type: ignore[no-untyped-def]
    return services.query.execute("SELECT count(*) AS n FROM numbers").table.to_pylist()[0]["n"]


def assert_each_once(services, count: int) -> dict[int, int]:  # type: ignore[no-untyped-def]
    """Every number once; the partitions' epochs."""
    answer = services.query.execute(
        "SELECT count(*) AS rows, count(DISTINCT n) AS numbers,"
        " (SELECT count(*) FROM (SELECT DISTINCT _kafka_partition, _kafka_offset"
        " FROM numbers)) AS origins FROM numbers"
    )
    assert answer.table.to_pylist() == [{"rows": count, "numbers": count, "origins": count}]
    return {
        p.partition: p.epoch for p in services.stores.sources.positions.positions("numbers_src")
    }


def one_worker_read_400(services, kafka_broker, tmp_path, assignment: str):  # type: ignore[no-untyped-def]
    """The source, a first worker that took every partition and committed 400 numbers:
    (produce, where workers run, the worker)."""
    produce = numbers_source(services, kafka_broker, assignment)
    where = (services.catalog.url, tmp_path / "objects")
    first = ConsumeWorker("numbers_src", *where)
    try:
        wait_until(lambda: EVERYTHING in assignments(first), "all assigned to one", first)
        produce(0)
        wait_until(lambda: rows(services) == 400, "400 rows", first)
    except BaseException:
        first.stop()
        raise
    return produce, where, first


def test_a_newer_worker_takes_every_partition_and_the_older_lets_go(
    services, kafka_broker, tmp_path
) -> None:
    produce, where, first = one_worker_read_400(services, kafka_broker, tmp_path, "direct")
    second = None
    try:
        second = ConsumeWorker("numbers_src", *where)
        wait_until(lambda: EVERYTHING in assignments(second), "all taken over", second)
        produce(400)  # both read them; the first's commit is fenced
        wait_until(lambda: rows(services) == 800, "800 rows", first, second)
        wait_until(lambda: "taken over by a newer worker" in first.output, "let go", first)
        produce(800)
        wait_until(lambda: rows(services) == 1200, "1200 rows", second)
        time.sleep(0.5)  # a duplicate committed late would show now
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert assignments(first) == [EVERYTHING]  # it never took them back
    epochs = assert_each_once(services, 1200)
    assert epochs == {p: 2 for p in EVERYTHING}, epochs  # the first's claim, the second's


def test_two_workers_split_the_partitions_and_hand_them_over(
    services, kafka_broker, tmp_path
) -> None:
    produce, where, first = one_worker_read_400(services, kafka_broker, tmp_path, "group")
    second = None
    try:
        second = ConsumeWorker("numbers_src", *where)

        def split() -> bool:
            mine, theirs = assignments(first)[-1:], assignments(second)[-1:]
            return bool(mine and theirs and mine[0] and theirs[0]) and (
                mine[0] | theirs[0] == EVERYTHING and not mine[0] & theirs[0]
            )

        wait_until(split, "split between the two", first, second)
        produce(400)
        wait_until(lambda: rows(services) == 800, "800 rows", first, second)

        first.stop()
        wait_until(lambda: assignments(second)[-1] == EVERYTHING, "handed over", second)
        produce(800)
        wait_until(lambda: rows(services) == 1200, "1200 rows", second)
    finally:
        first.stop()
        if second is not None:
            second.stop()
    epochs = assert_each_once(services, 1200)
    assert set(epochs) == EVERYTHING
    assert all(epoch >= 3 for epoch in epochs.values()), epochs  # alone, shared, alone again
