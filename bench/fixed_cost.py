"""Benchmark: the fixed cost of a statement — a point query on a 3-row table over HTTP and
over the Postgres protocol, against a real ``kyma serve``.

    python bench/fixed_cost.py [--runs 300]

Each statement runs ``--runs`` times after a warm-up on one keep-alive HTTP connection
(JSON answers) and on one psycopg connection (the simple query protocol, and prepared:
Bind/Execute only); the median (p50) and p95 are reported. "same" repeats one text;
"literals" changes the literal every run (``WHERE id = 10``, ``11``, …, never one used
before in the run); ``min/max`` and
``count`` are answered from statistics. Target: the point query ≤ 2 ms. Peers in the same
run: a loopback Postgres over its own protocol (prepared, the same rows) and DuckDB in
process (no network: the floor of planning and running the statement).
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import time

import duckdb
import psycopg
from _harness import Server, percentile
from pgwire import free_port

from kyma.runtime.postgres import EmbeddedPostgres

POINT = "SELECT name FROM t WHERE id = {}"
_FRESH = itertools.count(10)  # a literal no statement of the run used before, whatever the client
STATEMENTS = {
    "point, same": lambda i: POINT.format(2),
    "point, literals": lambda i: POINT.format(next(_FRESH)),
    "min/max(_timestamp)": lambda i: "SELECT min(_timestamp), max(_timestamp) FROM t",
    "count(*)": lambda i: "SELECT count(*) FROM t",
}


def timed_ms(run, runs: int) -> tuple[float, float]:
    """p50 and p95 of ``runs`` runs, after 20 to warm up."""
    for i in range(20):
        run(i)
    times = []
    for i in range(runs):
        start = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), percentile(times, 95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    port = free_port()
    server = Server(KYMA_PG_PORT=str(port))
    postgres = EmbeddedPostgres(server.home.parent / "peer", log=lambda _: None)
    try:
        server.sql("CREATE TABLE t (id long, name string)")
        body = b'{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n{"id": 3, "name": "c"}'
        assert server.ingest("t", [body]) == 3
        conn = server.connection()
        pg = psycopg.connect(f"host=127.0.0.1 port={port} user=kyma dbname=kyma", autocommit=True)
        oracle = psycopg.connect(postgres.start(), autocommit=True)
        oracle.execute("CREATE TABLE t (id bigint, name text, _timestamp timestamptz)")
        oracle.execute("INSERT INTO t VALUES (1, 'a', now()), (2, 'b', now()), (3, 'c', now())")
        duck = duckdb.connect()
        duck.execute("CREATE TABLE t (id BIGINT, name TEXT, _timestamp TIMESTAMPTZ)")
        duck.execute("INSERT INTO t VALUES (1, 'a', now()), (2, 'b', now()), (3, 'c', now())")
        print(f"{platform.node()} {platform.machine()}; p50 / p95 ms of {args.runs}")
        heads = ("HTTP", "pgwire", "prepared", "Postgres", "DuckDB")
        print(f"{'statement':<22}" + "".join(f"{h:>16}" for h in heads))
        for name, text in STATEMENTS.items():
            found = [
                timed_ms(lambda i, t=text: server.sql(t(i), conn), args.runs),
                timed_ms(lambda i, t=text: pg.execute(t(i)).fetchall(), args.runs),
                timed_ms(lambda i, t=text: pg.execute(t(i), prepare=True).fetchall(), args.runs),
                timed_ms(
                    lambda i, t=text: oracle.execute(t(i), prepare=True).fetchall(), args.runs
                ),
                timed_ms(lambda i, t=text: duck.execute(t(i)).fetchall(), args.runs),
            ]
            print(f"{name:<22}" + "".join(f"{p50:>9.2f} / {p95:<5.2f}" for p50, p95 in found))
    finally:
        server.stop()
        postgres.stop()


if __name__ == "__main__":
    main()
