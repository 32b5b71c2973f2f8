"""Benchmark: query latency of kyma against DuckDB over the same data as Parquet.

    python bench/query.py [--rows 10000000] [--repeat 5]

The rows go into kyma through POST /v1/ingest in 50 000-line requests (≈ 200 extents for
10 M rows) and into one Parquet file (row groups of 50 000) for DuckDB. Each query runs
``--repeat`` times; the median is reported, with the fraction of the table's bytes kyma read.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from _harness import Server
from _otel_logs import DIM, KYMA_DDL, START_NS, chunks, generate, write_ndjson

LINES = 50_000
QUERY_VECTOR = [0.5, -0.25, 0.1, 0.9, -0.3, 0.0, 0.2, -0.7]
WINDOW_START = START_NS + 6 * 3600 * 10**9  # 06:00, a five-minute window
WINDOW_END = WINDOW_START + 300 * 10**9


def _iso(ns: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns // 10**9))


QUERIES = {
    "needle": (
        "SELECT _timestamp, message FROM logs WHERE service_name = 'svc-0042'"
        " AND has_token(message, 'timeout')"
        f" AND _timestamp >= '{_iso(WINDOW_START)}' AND _timestamp < '{_iso(WINDOW_END)}'",
        "SELECT timestamp, message FROM logs WHERE service_name = 'svc-0042'"
        " AND regexp_matches(lower(message), '(^|[^a-z0-9])timeout([^a-z0-9]|$)')"
        f" AND timestamp >= '{_iso(WINDOW_START)}' AND timestamp < '{_iso(WINDOW_END)}'",
    ),
    "group_by": (
        "SELECT service_name, count(*) AS n, avg(duration_ms) AS avg_ms FROM logs"
        " GROUP BY service_name ORDER BY n DESC LIMIT 20",
        "SELECT service_name, count(*) AS n, avg(duration_ms) AS avg_ms FROM logs"
        " GROUP BY service_name ORDER BY n DESC LIMIT 20",
    ),
    "top10_cosine": (
        f"SELECT trace_id, cosine_distance(embedding, {QUERY_VECTOR}) AS d FROM logs"
        " ORDER BY d LIMIT 10",
        f"SELECT trace_id, array_cosine_distance(embedding::FLOAT[{DIM}],"
        f" {QUERY_VECTOR}::FLOAT[{DIM}]) AS d"
        " FROM logs ORDER BY d LIMIT 10",
    ),
}


def median_seconds(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-query-"))
    table = generate(args.rows, seed=23)
    write_ndjson(table, work / "logs.ndjson")
    pq.write_table(table, work / "logs.parquet", row_group_size=LINES, compression="zstd")
    del table
    print(f"rows={args.rows:,}; {platform.node()} {platform.machine()}")

    duck = duckdb.connect()
    duck.execute(f"CREATE VIEW logs AS SELECT * FROM read_parquet('{work / 'logs.parquet'}')")
    server = Server()
    try:
        server.sql(KYMA_DDL)
        server.ingest("logs", chunks(work / "logs.ndjson", LINES), clients=2)
        info = server.sql("SELECT count(*) FROM logs")
        assert info["rows"][0][0] == args.rows
        conn = server.connection()
        # A full scan's bytes: every column of every block (no filter to prune with).
        total_bytes = server.sql("SELECT * FROM logs LIMIT 1", conn)["stats"]["bytes_read"]
        print(
            f"{'query':<14}{'kyma ms':>10}{'duckdb ms':>11}{'ratio':>8}{'bytes read':>12}"
            f"{'extents':>10}"
        )
        for name, (kyma_sql, duck_sql) in QUERIES.items():
            answer = server.sql(kyma_sql, conn)
            assert answer["rows"] or name == "needle"
            stats = answer["stats"]
            kyma_s = median_seconds(lambda q=kyma_sql: server.sql(q, conn), args.repeat)
            duck_s = median_seconds(lambda q=duck_sql: duck.sql(q).to_arrow_table(), args.repeat)
            print(
                f"{name:<14}{kyma_s * 1000:>10.1f}{duck_s * 1000:>11.1f}"
                f"{duck_s / kyma_s:>7.2f}x{stats['bytes_read'] / total_bytes:>11.1%}"
                f"{stats['extents_after_catalog']:>5}/{stats['extents_total']}"
            )
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
