"""Benchmark: the fixed cost of a statement — a point query on a 3-row table over HTTP and
over the Postgres protocol, against a real ``kyma serve``.

    python bench/fixed_cost.py [--runs 300]

Each statement runs ``--runs`` times after a warm-up on one keep-alive HTTP connection
(JSON answers) and on one psycopg connection (the simple query protocol, and prepared:
Bind/Execute only); the median is reported. "same" repeats one text; "literals" changes
the literal every run (``WHERE id = 0``, ``1``, …); ``min/max`` and ``count`` are answered
from statistics. Target: the point query ≤ 2 ms.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import psycopg
from _harness import Server
from pgwire import free_port

POINT = "SELECT name FROM t WHERE id = {}"
STATEMENTS = {
    "point, same": lambda i: POINT.format(2),
    "point, literals": lambda i: POINT.format(i % 1000),
    "min/max(_timestamp)": lambda i: "SELECT min(_timestamp), max(_timestamp) FROM t",
    "count(*)": lambda i: "SELECT count(*) FROM t",
}


def median_ms(run, runs: int) -> float:
    for i in range(20):
        run(i)
    times = []
    for i in range(runs):
        start = time.perf_counter()
        run(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    port = free_port()
    server = Server(KYMA_PG_PORT=str(port))
    try:
        server.sql("CREATE TABLE t (id long, name string)")
        body = b'{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n{"id": 3, "name": "c"}'
        assert server.ingest("t", [body]) == 3
        conn = server.connection()
        pg = psycopg.connect(f"host=127.0.0.1 port={port} user=kyma dbname=kyma", autocommit=True)
        print(f"{platform.node()} {platform.machine()}; median of {args.runs}")
        print(f"{'statement':<22}{'HTTP ms':>9}{'pgwire ms':>11}{'prepared ms':>13}")
        for name, text in STATEMENTS.items():
            http = median_ms(lambda i, t=text: server.sql(t(i), conn), args.runs)
            simple = median_ms(lambda i, t=text: pg.execute(t(i)).fetchall(), args.runs)
            prepared = median_ms(
                lambda i, t=text: pg.execute(t(i), prepare=True).fetchall(), args.runs
            )
            print(f"{name:<22}{http:>9.2f}{simple:>11.2f}{prepared:>13.2f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
