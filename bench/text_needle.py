"""Benchmark: a rare word in one large extent (stage 3's token filters), kyma vs DuckDB.

    python bench/text_needle.py [--rows 1000000] [--repeat 7]

``--rows`` OTel-shaped log rows (bench/_otel_logs.py) go into a real ``kyma serve`` in one
request, so they are one extent (row groups of ``KYMA_BLOCK_ROWS``), and into one Parquet
file for DuckDB. One row's message holds the word ``zebra``. Each query runs ``--repeat``
times; medians, with the row groups kyma's stages kept and the bytes it read. Run it with
another checkout's interpreter for a before/after pair on the same data (same seed).
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
import pyarrow as pa
import pyarrow.parquet as pq
from _harness import Server
from _otel_logs import KYMA_DDL, chunks, generate, write_ndjson

QUERIES = {
    "word LIKE": (
        "SELECT _timestamp, message FROM logs WHERE message LIKE '% zebra %'",
        "SELECT timestamp, message FROM logs WHERE message LIKE '% zebra %'",
    ),
    "word ILIKE": (
        "SELECT _timestamp, message FROM logs WHERE message ILIKE '% ZEBRA %'",
        "SELECT timestamp, message FROM logs WHERE message ILIKE '% ZEBRA %'",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-needle-"))
    table = generate(args.rows, seed=31)
    messages = table.column("message").to_numpy(zero_copy_only=False).astype(object)
    messages[args.rows * 5 // 8] = "read cache zebra after 12 user u7"
    where = table.schema.get_field_index("message")
    table = table.set_column(where, "message", pa.array(messages, pa.string()))
    write_ndjson(table, work / "logs.ndjson")
    pq.write_table(table, work / "logs.parquet", compression="zstd")
    print(f"rows={args.rows:,}; {platform.node()} {platform.machine()}")
    duck = duckdb.connect()
    duck.execute(f"CREATE VIEW logs AS SELECT * FROM read_parquet('{work / 'logs.parquet'}')")
    server = Server(KYMA_MAX_BODY_BYTES=str(1 << 30))
    try:
        server.sql(KYMA_DDL)
        server.ingest("logs", chunks(work / "logs.ndjson", args.rows), clients=1)
        conn = server.connection()
        count = server.sql("SELECT count(*) FROM logs", conn)["rows"]
        assert count == [[args.rows]], count
        print(f"{'query':<12}{'kyma ms':>9}{'duckdb ms':>11}{'kyma/duckdb':>13}  row groups kept")
        for name, (kyma_sql, duck_sql) in QUERIES.items():
            answer = server.sql(kyma_sql, conn)
            assert len(answer["rows"]) == 1, (answer["rows"], answer["stats"])
            stats = answer["stats"]
            kyma, duck_times = [], []
            for _ in range(args.repeat):
                start = time.perf_counter()
                server.sql(kyma_sql, conn)
                kyma.append(time.perf_counter() - start)
                start = time.perf_counter()
                duck.sql(duck_sql).to_arrow_table()
                duck_times.append(time.perf_counter() - start)
            k, d = statistics.median(kyma) * 1e3, statistics.median(duck_times) * 1e3
            kept = stats.get("blocks_after_tokens", stats["blocks_after_stats"])
            print(
                f"{name:<12}{k:>9.1f}{d:>11.1f}{k / d:>12.2f}x  {kept}/{stats['blocks_total']}"
                f" ({stats['bytes_read'] / 1e6:.1f} MB read)"
            )
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
