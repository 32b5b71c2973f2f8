"""Benchmark: sustained Kafka ingest, exactly-once, vs a bare consumer that only polls;
then how soon the source reads again after kill -9 of ``kyma serve``.

    python bench/kafka.py [--messages 1000000] [--max-rows N] [--writers N] [--restarts 5]
                          [--assignment direct|group] [--baseline DIR]

A tansu broker on loopback (the one the tests use, in memory) holds ``--messages``
log-shaped JSON messages on a 3-partition topic, produced before anything is timed.
The peer is a confluent-kafka consumer assigned all three partitions that polls every
message and does nothing with it. kyma is a real ``kyma serve`` (embedded Postgres catalog,
local store) given a source by POST /v1/sources: the clock runs from the POST until the
catalog's positions cover every message, so it includes taking the partitions, coercion, extent
writes with fsync, and a catalog commit (rows and offsets in one transaction) per batch.

Resume: ``--restarts`` times, kill -9 the server, produce 10 000 messages, start it again
on the same home (its Postgres, left running, is adopted): the seconds from the new server
being ready to the first new rows being visible to a query. Median and max are printed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from _harness import Server
from confluent_kafka import Consumer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from kafka_broker import KafkaBroker  # noqa: E402  (test infrastructure)

PARTITIONS = 3
TOPIC = "events"
CHUNK = 50_000


def message(i: int) -> bytes:
    return json.dumps(
        {
            "ts": 1_763_700_000_000_000_000 + i * 1_000_000,
            "service": f"svc-{i % 50}",
            "level": ("INFO", "WARN", "ERROR")[i % 3],
            "user": f"user-{i % 10_007}",
            "path": f"/api/v1/items/{i % 997}",
            "status": 200 + (i % 5),
            "ms": (i % 1000) / 10,
        }
    ).encode()


def produce(broker: KafkaBroker, messages: int, start: int = 0) -> float:
    began = time.perf_counter()
    for first in range(start, start + messages, CHUNK):
        values = [message(i) for i in range(first, min(first + CHUNK, start + messages))]
        broker.produce(TOPIC, values, spread=PARTITIONS, timeout=300)
    return time.perf_counter() - began


def bare_poll(broker: KafkaBroker, messages: int) -> float:
    """Seconds for a consumer to receive every message, doing nothing with them."""
    consumer = Consumer(broker.config(**{"group.id": "bench-peer", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    start, seen = time.perf_counter(), 0
    deadline = time.monotonic() + 600
    while seen < messages and time.monotonic() < deadline:
        batch = consumer.consume(10_000, timeout=1.0)
        seen += sum(1 for m in batch if m.error() is None)
    elapsed = time.perf_counter() - start
    consumer.close()
    assert seen == messages, f"the bare consumer saw {seen} of {messages}"
    return elapsed


def kyma_source(
    server: Server, broker: KafkaBroker, messages: int, batch: dict, assignment: str
) -> float:
    """Seconds from creating the source until its catalog positions cover every message."""
    server.sql(
        "CREATE TABLE events (ts timestamp, service string, level string, user string,"
        " path string, status int, ms real)"
    )
    body = {
        "name": "events_src",
        "type": "kafka",
        "table": "events",
        "assignment": assignment,
        "kafka": {
            "bootstrap_servers": broker.bootstrap,
            "topics": [TOPIC],
            "group_id": "bench-kyma",  # librdkafka's session timeout, as a user's
        },
        "batch": {**batch, "max_latency_ms": 1000},
    }
    conn = server.connection()
    start = time.perf_counter()
    conn.request("POST", "/v1/sources", json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    assert answer.status == 201, answer.read()
    answer.read()
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        rows = server.sql("SELECT count(*) AS n FROM events", conn)["rows"][0][0]
        if rows >= messages:
            break
        time.sleep(0.2)
    elapsed = time.perf_counter() - start
    assert rows == messages, f"kyma has {rows} rows of {messages}"
    return elapsed


def rows_of(server: Server) -> int:
    return server.sql("SELECT count(*) AS n FROM events")["rows"][0][0]


def resume_after_kill(server: Server, broker: KafkaBroker, messages: int) -> tuple[Server, float]:
    """kill -9 ``server``, produce more, start it again: (the new server, seconds from its
    being ready until the first new rows show)."""
    before = rows_of(server)
    server.proc.kill()
    server.proc.wait(timeout=60)
    produce(broker, messages, start=before)
    home = server.home
    server = Server(KYMA_HOME=str(home))
    server.home = home
    ready = time.perf_counter()
    deadline = time.monotonic() + 300
    while rows_of(server) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    seconds = time.perf_counter() - ready
    assert rows_of(server) > before, "nothing new after 300 s"
    return server, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--max-rows", type=int, help="the source's batch.max_rows (its default)")
    parser.add_argument("--writers", type=int, help="the source's batch.writers (its default)")
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--assignment", choices=("direct", "group"), default="direct")
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of peer, baseline, kyma; best of each"
    )
    parser.add_argument(
        "--baseline",
        help="a folder holding another kyma package (e.g. an earlier commit's, laid out as"
        " installed) to measure in the same run, on the same messages, at its defaults",
    )
    args = parser.parse_args()
    print(f"messages={args.messages:,}; {platform.node()} {platform.machine()}")
    batch = {"max_rows": args.max_rows} if args.max_rows else {}
    ours_batch = batch | ({"writers": args.writers} if args.writers else {})
    peers, befores, ourses, resumes = [], [], [], []
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=PARTITIONS)
        size = len(message(0))
        seconds = produce(broker, args.messages)
        print(f"produced {args.messages:,} messages of ~{size} B in {seconds:.1f}s")
        for round_ in range(args.repeat):  # interleaved: a busy machine slows all alike
            peers.append(bare_poll(broker, args.messages))
            if args.baseline:
                server = Server(PYTHONPATH=args.baseline)
                try:
                    befores.append(
                        kyma_source(server, broker, args.messages, batch, args.assignment)
                    )
                finally:
                    server.stop()
            server = Server()
            try:
                ourses.append(
                    kyma_source(server, broker, args.messages, ours_batch, args.assignment)
                )
                for _ in range(args.restarts if round_ == args.repeat - 1 else 0):
                    server, seconds = resume_after_kill(server, broker, 10_000)
                    resumes.append(seconds)
            finally:
                server.stop()
            print(f"round {round_ + 1}: peer {peers[-1]:.1f} s, kyma {ourses[-1]:.1f} s", end="")
            print(f", baseline {befores[-1]:.1f} s" if befores else "")
    peer, ours = min(peers), min(ourses)
    rate_peer, rate_ours = args.messages / peer, args.messages / ours
    print(f"| bare confluent-kafka poll | {rate_peer:,.0f} rows/s | {peer:.1f} s |")
    print(f"| kyma source, exactly once | {rate_ours:,.0f} rows/s | {ours:.1f} s |")
    if befores:
        before = min(befores)
        rate_before = args.messages / before
        print(f"| baseline kyma source | {rate_before:,.0f} rows/s | {before:.1f} s |")
        print(f"baseline ÷ bare poll: {rate_before / rate_peer:.2f}x")
    print(f"kyma ÷ bare poll: {rate_ours / rate_peer:.2f}x")
    if resumes:
        each = ", ".join(f"{s:.2f}" for s in resumes)
        print(
            f"resume after kill -9 ({args.assignment}): median {statistics.median(resumes):.2f} s,"
            f" max {max(resumes):.2f} s  ({each})"
        )


if __name__ == "__main__":
    main()
