"""Benchmark: queries on dynamic paths, kyma (shredded sub-columns) against DuckDB over Parquet
with the same attributes as a JSON column.

    python bench/dynamic.py [--rows 1000000] [--repeat 5]

OTel-shaped log rows whose ``attributes`` hold high-cardinality values (``user.id``,
``url.path``), ``http.status_code``, ``http.method`` and a nested object. They go into a real
``kyma serve`` through POST /v1/ingest in 50 000-line requests, and into one Parquet file
(zstd, row groups of 50 000) for DuckDB. Each query runs ``--repeat`` times; medians are
reported. ``cbor lookup`` rows force kyma's per-value CBOR decode (the path over an
expression, not a column) -- what every path query cost before shredding.
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
import numpy as np
import pyarrow as pa
from _harness import Server, seconds
from _otel_logs import START_NS, chunks

LINES = 50_000
NEEDLE = "u0123457"
KYMA_DDL = "CREATE TABLE logs (service_name string, message string, attributes dynamic)"


def generate(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = START_NS + np.arange(rows, dtype=np.int64) * 86_400_000_000
    users = np.char.mod("u%07d", rng.integers(0, 10_000_000, rows))
    users[rows // 2] = NEEDLE
    paths = np.char.add("/api/v1/items/", rng.integers(0, 1_000_000, rows).astype(str))
    pick = lambda values, n: pa.array(values).take(pa.array(rng.integers(0, len(values), n)))  # noqa: E731
    return pa.table(
        {
            "timestamp": pa.array(ts, pa.timestamp("ns", tz="UTC")),
            "service_name": pick([f"svc-{i:03d}" for i in range(100)], rows),
            "message": pick(["request served", "request failed", "cache miss"], rows),
            "user_id": pa.array(users),
            "url_path": pa.array(paths),
            "status": pick([200, 200, 200, 201, 204, 301, 404, 500, 503], rows),
            "method": pick(["GET", "POST", "PUT", "DELETE"], rows),
            "region": pick(["eu-west-1", "us-east-1", "ap-south-1"], rows),
            "build": pa.array(rng.integers(1000, 1100, rows)),
        }
    )


ATTRIBUTES = (
    "{'user.id': user_id, 'url.path': url_path, 'http.status_code': status,"
    " 'http.method': method, 'client': {'region': region, 'build': build}}"
)


def write_inputs(table: pa.Table, work: Path) -> None:
    """kyma's NDJSON, and Parquet with ``attributes`` as a JSON column, both by DuckDB."""
    con = duckdb.connect()
    con.register("generated", table)
    con.execute(
        f"""COPY (SELECT epoch_ns(timestamp) AS _timestamp, service_name, message,
                 {ATTRIBUTES} AS attributes FROM generated)
            TO '{work / "logs.ndjson"}' (FORMAT JSON)"""
    )
    con.execute(
        f"""COPY (SELECT timestamp, service_name, message, to_json({ATTRIBUTES}) AS attributes
                  FROM generated)
            TO '{work / "logs.parquet"}' (FORMAT PARQUET, COMPRESSION ZSTD,
                                          ROW_GROUP_SIZE {LINES})"""
    )
    con.close()


QUERIES = {
    "group_by status": (
        "SELECT attributes['http.status_code'] AS s, count(*) AS n FROM logs"
        " GROUP BY attributes['http.status_code'] ORDER BY s",
        "SELECT attributes->>'$.\"http.status_code\"' AS s, count(*) AS n FROM logs"
        " GROUP BY s ORDER BY s",
    ),
    "needle user.id": (
        f"SELECT attributes['url.path'] AS p FROM logs WHERE attributes['user.id'] = '{NEEDLE}'",
        f"SELECT attributes->>'$.\"url.path\"' AS p FROM logs"
        f" WHERE attributes->>'$.\"user.id\"' = '{NEEDLE}'",
    ),
    "group_by nested": (
        "SELECT attributes['client']['region'] AS r, count(*) AS n FROM logs"
        " GROUP BY attributes['client']['region'] ORDER BY r",
        "SELECT attributes->>'$.client.region' AS r, count(*) AS n FROM logs GROUP BY r ORDER BY r",
    ),
}
CBOR_LOOKUP = {  # the same answers through kyma_dyn_get's per-value CBOR decode
    "group_by status": "SELECT kyma_dyn_get(coalesce(attributes, attributes),"
    " '[\"http.status_code\"]') AS s, count(*) AS n FROM logs GROUP BY s ORDER BY s",
    "needle user.id": "SELECT attributes['url.path'] AS p FROM logs"
    f" WHERE kyma_dyn_get(coalesce(attributes, attributes), '[\"user.id\"]') = '{NEEDLE}'",
}


def median_seconds(run, repeat: int) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(seconds(run) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-dynamic-"))
    write_inputs(generate(args.rows, seed=31), work)
    print(f"rows={args.rows:,}; {platform.node()} {platform.machine()}; {time.strftime('%F')}")
    duck = duckdb.connect()
    duck.execute(f"CREATE VIEW logs AS SELECT * FROM read_parquet('{work / 'logs.parquet'}')")
    server = Server()
    try:
        server.sql(KYMA_DDL)
        ingest_s = seconds(lambda: server.ingest("logs", chunks(work / "logs.ndjson", LINES)))
        assert server.sql("SELECT count(*) FROM logs")["rows"][0][0] == args.rows
        print(f"ingest: {ingest_s:.1f} s; duckdb's Parquet: {_size(work / 'logs.parquet')}")
        conn = server.connection()
        print(f"{'query':<18}{'kyma ms':>10}{'duckdb ms':>11}{'kyma/duckdb':>13}{'bytes read':>12}")
        for name, (kyma_sql, duck_sql) in QUERIES.items():
            answer = server.sql(kyma_sql, conn)
            expected = duck.sql(duck_sql).fetchall()
            assert [tuple(r) for r in answer["rows"]] == expected, (answer["rows"], expected)
            kyma_s = median_seconds(lambda q=kyma_sql: server.sql(q, conn), args.repeat)
            duck_s = median_seconds(lambda q=duck_sql: duck.sql(q).to_arrow_table(), args.repeat)
            print(
                f"{name:<18}{kyma_s * 1000:>10.1f}{duck_s * 1000:>11.1f}"
                f"{kyma_s / duck_s:>12.2f}x{answer['stats']['bytes_read'] / 1e6:>10.1f}MB"
            )
        for name, kyma_sql in CBOR_LOOKUP.items():
            repeat = max(1, args.repeat // 2)
            kyma_s = median_seconds(lambda q=kyma_sql: server.sql(q, conn), repeat)
            print(f"{name + ' (cbor lookup)':<30}{kyma_s * 1000:>10.1f} ms")
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"


if __name__ == "__main__":
    main()
