"""Benchmark: sustained Kafka ingest, exactly-once, vs a bare consumer that only polls;
then how soon the source reads again after kill -9 of ``kyma serve``.

    python bench/kafka.py [--messages 1000000] [--max-rows N] [--writers N] [--restarts 5]
                          [--assignment direct|group] [--baseline DIR]

A tansu broker on loopback (the one the tests use, in memory) holds ``--messages``
log-shaped JSON messages on a 3-partition topic, produced before anything is timed.
The peer is a confluent-kafka consumer assigned all three partitions that polls every
message and does nothing with it: its clock runs from the assignment (before it connects)
until it has received the last message. kyma is a real ``kyma serve`` (embedded Postgres
catalog, local store) given a source by POST /v1/sources: the clock runs from the POST until
the catalog's positions cover every message (read from its Postgres every 20 ms, so the
watching costs the server nothing; a batch's rows and positions commit in one transaction,
and a count of the rows checks it after), so it includes creating the source, taking the
partitions, coercion, extent writes with fsync, and every catalog commit, the last one's too.
Both read the same messages from the same broker. Besides the seconds, the CPU seconds of
the peer's consumer and of kyma's server (its Postgres not counted) are printed: on a
shared machine they move less than the wall clock.

Resume: ``--restarts`` times, kill -9 the server, produce 10 000 messages, start it again
on the same home (its Postgres, left running, is adopted): the seconds from the new server
being ready to the first new rows being visible to a query. Median and max are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import psycopg
from _harness import Server
from confluent_kafka import Consumer, TopicPartition

from kyma.runtime.postgres import EmbeddedPostgres

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


def bare_poll(broker: KafkaBroker, messages: int) -> tuple[float, float]:
    """Seconds for a consumer to receive every message, doing nothing with them; and the
    CPU seconds it took."""
    consumer = Consumer(broker.config(**{"group.id": "bench-peer", "enable.auto.commit": False}))
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    start, seen, cpu = time.perf_counter(), 0, time.process_time()
    deadline = time.monotonic() + 600
    while seen < messages and time.monotonic() < deadline:
        batch = consumer.consume(10_000, timeout=1.0)
        seen += sum(1 for m in batch if m.error() is None)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    consumer.close()
    assert seen == messages, f"the bare consumer saw {seen} of {messages}"
    return elapsed, cpu


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kyma_source(
    server: Server, broker: KafkaBroker, messages: int, batch: dict, assignment: str
) -> tuple[float, float]:
    """Seconds from creating the source until its catalog positions cover every message;
    and the server's CPU seconds meanwhile."""
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
    embedded = EmbeddedPostgres(server.home / "catalog", log=lambda _: None)
    catalog = psycopg.connect(embedded.start(), autocommit=True)
    start, cpu = time.perf_counter(), cpu_seconds(server.proc.pid)
    conn.request("POST", "/v1/sources", json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    assert answer.status == 201, answer.read()
    answer.read()
    deadline = time.monotonic() + 1800
    with catalog:
        while read_to(catalog) < messages and time.monotonic() < deadline:
            time.sleep(0.02)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(server.proc.pid) - cpu
    rows = server.sql("SELECT count(*) AS n FROM events", conn)["rows"][0][0]
    assert rows == messages, f"kyma has {rows} rows of {messages}"
    return elapsed, cpu


def read_to(catalog: psycopg.Connection) -> int:
    """Messages the source's committed positions cover, over every partition."""
    row = catalog.execute(
        "SELECT coalesce(sum(position), 0) FROM kyma.source_positions WHERE source = 'events_src'"
    ).fetchone()
    return int(row[0]) if row else 0


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
    peers: list[tuple[float, float]] = []
    befores: list[tuple[float, float]] = []
    ourses: list[tuple[float, float]] = []
    resumes: list[float] = []
    with KafkaBroker() as broker:
        broker.create_topic(TOPIC, partitions=PARTITIONS)
        size = len(message(0))
        seconds = produce(broker, args.messages)
        print(f"produced {args.messages:,} messages of ~{size} B in {seconds:.1f}s")
        for round_ in range(args.repeat):  # interleaved: a busy machine slows all alike
            peers.append(bare_poll(broker, args.messages))
            kymas = [("ours", ours_batch, {})]
            if args.baseline:  # which goes first alternates from round to round
                kymas.insert(round_ % 2, ("baseline", batch, {"PYTHONPATH": args.baseline}))
            for label, settings, env in kymas:
                server = Server(**env)
                try:
                    taken = kyma_source(server, broker, args.messages, settings, args.assignment)
                    (ourses if label == "ours" else befores).append(taken)
                    last = round_ == args.repeat - 1
                    for _ in range(args.restarts if last and label == "ours" else 0):
                        server, seconds = resume_after_kill(server, broker, 10_000)
                        resumes.append(seconds)
                finally:
                    server.stop()
            print(
                f"round {round_ + 1}: peer {peers[-1][0]:.2f} s, kyma {ourses[-1][0]:.2f} s"
                + (f", baseline {befores[-1][0]:.2f} s" if befores else "")
                + f"; load {os.getloadavg()[0]:.1f}"
            )
    print("| | rows/s (best) | s (best) | CPU s (median) | ÷ bare poll (best; median of rounds) |")
    print("|---|---|---|---|---|")
    rows = [("bare confluent-kafka poll", peers), ("kyma source, exactly once", ourses)]
    if befores:
        rows.append(("baseline kyma source", befores))
    for label, runs in rows:
        best = min(s for s, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        ratio = min(s for s, _ in peers) / best
        each = statistics.median(p[0] / r[0] for p, r in zip(peers, runs, strict=True))
        print(
            f"| {label} | {args.messages / best:,.0f} | {best:.2f} | {cpu:.2f} |"
            f" {ratio:.2f}x; {each:.2f}x |"
        )
    if resumes:
        each = ", ".join(f"{s:.2f}" for s in resumes)
        print(
            f"resume after kill -9 ({args.assignment}): median {statistics.median(resumes):.2f} s,"
            f" max {max(resumes):.2f} s  ({each})"
        )


if __name__ == "__main__":
    main()
