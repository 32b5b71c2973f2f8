"""Benchmark: fetching a large result through Arrow Flight SQL vs POST /v1/query.

    python bench/flight.py [--rows 5000000] [--repeat 3]

A real ``kyma serve``; 2 500 rows go in through POST /v1/ingest, and a cross join makes the
result: ``--rows`` rows of (long, string, double). Each way of fetching runs the same query
and materialises it client-side as Arrow (Flight SQL through the ADBC driver; HTTP with
``Accept: application/vnd.apache.arrow.stream``) or as Python rows (HTTP JSON). The median
of ``--repeat`` runs is reported (JSON: one run, it is slow and memory-hungry).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import time

import adbc_driver_flightsql.dbapi
import pyarrow as pa
from _harness import Server

SIDE = 2_500
ARROW_STREAM = "application/vnd.apache.arrow.stream"


def query(rows: int) -> str:
    inner = rows // SIDE
    assert inner * SIDE == rows and inner <= SIDE, f"--rows must be k × {SIDE}, k ≤ {SIDE}"
    return (
        f"SELECT a.d * {SIDE} + b.d AS n, a.name, b.d * 0.5 AS r"
        f" FROM nums a CROSS JOIN (SELECT d FROM nums WHERE d < {inner}) b"
    )


def median_seconds(run, repeat: int) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sql = query(args.rows)
    print(f"rows={args.rows:,}; {platform.node()} {platform.machine()}")
    server = Server()
    try:
        server.sql("CREATE TABLE nums (d long, name string)")
        body = "\n".join(json.dumps({"d": i, "name": f"name-{i:05d}"}) for i in range(SIDE))
        assert server.ingest("nums", [body.encode()]) == SIDE
        conn = server.connection()

        def http(accept: str) -> bytes:
            conn.request(
                "POST",
                "/v1/query",
                json.dumps({"sql": sql}),
                {"Content-Type": "application/json", "Accept": accept},
            )
            answer = conn.getresponse()
            data = answer.read()
            assert answer.status == 200, data[:500]
            return data

        flight = adbc_driver_flightsql.dbapi.connect(server.flight_url, autocommit=True)

        def via_flight() -> int:
            with flight.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table().num_rows

        def via_ipc() -> int:
            return pa.ipc.open_stream(http(ARROW_STREAM)).read_all().num_rows

        def via_json() -> int:
            return len(json.loads(http("application/json"))["rows"])

        via_flight()  # warm up: the extents' pages, DataFusion's first plan
        results = {
            "Flight SQL (ADBC)": median_seconds(via_flight, args.repeat),
            "HTTP Arrow IPC": median_seconds(via_ipc, args.repeat),
            "HTTP JSON": median_seconds(via_json, 1),
        }
        flight.close()
        base = results["Flight SQL (ADBC)"][0]
        print(f"{'path':<20}{'seconds':>9}{'Mrows/s':>9}{'vs Flight':>11}")
        for name, (seconds, rows) in results.items():
            assert rows == args.rows, (name, rows)
            print(f"{name:<20}{seconds:>9.2f}{rows / seconds / 1e6:>9.2f}{seconds / base:>10.2f}x")
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
