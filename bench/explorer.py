"""Benchmark: the log explorer's queries, kyma against DuckDB over the same rows as Parquet.

    python bench/explorer.py [--rows 10000000] [--extent-rows 250000] [--repeat 5]

The newest 100 rows; the newest 100 rows whose message holds a rare word (one row in about
200 000), as a substring (``LIKE '%zanzibar%'``) and as the console's search box asks
(``has_token``; DuckDB answers the same rows with the ``LIKE``); a per-minute histogram of
one day. Log lines over 30 days in time order go
through kyma's write path in process (``--extent-rows`` a commit, one extent each) and into
one Parquet file (zstd) for DuckDB. Each query: a warm-up per engine, then the median of
``--repeat`` runs, alternated; kyma's decoded-column cache off (``KYMA_QUERY_CACHE_BYTES=0``)
and on. The answers must agree. Wall and CPU time (steadier on a shared machine) are both
reported. Target: kyma ≤ 0.5x DuckDB.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kyma.services import open_services
from kyma.settings import Settings

START = np.datetime64("2026-11-01T00:00:00", "ns")
DAYS = 30
RARE = "zanzibar"
DDL = "CREATE TABLE logs (service string, severity string, message string, duration long)"
COLUMNS = "_timestamp, service, severity, message, duration"
QUERIES = {
    "newest 100": f"SELECT {COLUMNS} FROM logs ORDER BY _timestamp DESC LIMIT 100",
    "newest 100 with a rare word": f"SELECT {COLUMNS} FROM logs WHERE message LIKE '%{RARE}%'"
    " ORDER BY _timestamp DESC LIMIT 100",
    "rare word, has_token": f"SELECT {COLUMNS} FROM logs WHERE has_token(message, '{RARE}')"
    " ORDER BY _timestamp DESC LIMIT 100",
    "per-minute histogram of a day": "SELECT date_trunc('minute', _timestamp) AS m, count(*)"
    " AS n FROM logs WHERE _timestamp >= '2026-11-20' AND _timestamp < '2026-11-21'"
    " GROUP BY 1 ORDER BY 1",
}

PEER = {"rare word, has_token": QUERIES["newest 100 with a rare word"]}
"""DuckDB's statement where it differs (it has no ``has_token``; on these rows the same)."""


def batches(rows: int, size: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(5000)] + ["error", "timeout", "ok", "user"])
    services = pa.array([f"svc-{i:02d}" for i in range(40)])
    severities = pa.array(["DEBUG", "INFO", "WARN", "ERROR"])
    times = np.sort(rng.integers(0, DAYS * 86_400 * 10**9, rows, dtype=np.int64))
    for start in range(0, rows, size):
        n = min(size, rows - start)
        parts = [pa.array(rng.choice(words, n)) for _ in range(6)]
        message = pa.compute.binary_join_element_wise(*parts, " ")
        rare = rng.random(n) < 1 / 200_000
        message = pa.compute.if_else(
            pa.array(rare), pa.compute.binary_join_element_wise(message, RARE, " "), message
        )
        yield pa.record_batch(
            {
                "_timestamp": pa.array(
                    START + times[start : start + n].astype("timedelta64[ns]"),
                    pa.timestamp("ns", tz="UTC"),
                ),
                "service": services.take(pa.array(rng.integers(0, 40, n))),
                "severity": severities.take(pa.array(rng.integers(0, 4, n))),
                "message": message,
                "duration": rng.integers(0, 5000, n),
            }
        )


def timed(run, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds (the process's, every thread: both engines run in it)."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--extent-rows", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="a folder to keep the data in, and reuse")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="kyma-bench-explorer-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    fresh = not home.exists()
    if fresh:
        writer = None
        for batch in batches(args.rows, args.extent_rows):
            writer = writer or pq.ParquetWriter(
                work / "logs.parquet", batch.schema, compression="zstd"
            )
            writer.write_batch(batch)
        writer.close()
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.execute(f"CREATE VIEW logs AS SELECT * FROM read_parquet('{work / 'logs.parquet'}')")
    results: dict[str, dict[int, tuple[float, float]]] = {name: {} for name in QUERIES}
    duck_s: dict[str, tuple[float, float]] = {}
    try:
        for cache in (0, 512 * 1024 * 1024):
            with open_services(
                Settings(home=home, query_cache_bytes=cache), log=lambda _: None
            ) as s:
                engine = s.query
                if fresh:
                    engine.execute(DDL)
                    source = pq.ParquetFile(work / "logs.parquet")
                    for i in range(source.num_row_groups):
                        group = source.read_row_group(i).to_batches()
                        s.write_path.ingest_batches("logs", group, source="bench")
                    fresh = False
                for name, sql in QUERIES.items():
                    peer = PEER.get(name, sql)
                    kyma = engine.execute(sql).table
                    duck_answer = duck.sql(peer).to_arrow_table()
                    assert kyma.num_rows == duck_answer.num_rows, name
                    assert kyma.column(0).to_pylist() == duck_answer.column(0).to_pylist(), name
                    if name not in duck_s:
                        duck_s[name] = timed(
                            lambda q=peer: duck.sql(q).to_arrow_table(), args.repeat
                        )
                    results[name][cache] = timed(lambda q=sql, e=engine: e.execute(q), args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, {args.rows:,} rows,")
    print(f"{args.extent_rows:,} rows per extent, median of {args.repeat}")
    print(f"load average {os.getloadavg()[0]:.1f}; wall ms, then CPU ms (ratios to DuckDB's)")
    head = ("query", "duckdb ms", "cache off ms", "ratio", "cache on ms", "ratio")
    for kind in (0, 1):
        print("{:<32}{:>10}{:>14}{:>7}{:>13}{:>7}".format(*head))
        for name, by_cache in results.items():
            off, on = by_cache[0][kind], by_cache[512 * 1024 * 1024][kind]
            d = duck_s[name][kind]
            cells = f"{off * 1e3:>14.1f}{off / d:>6.2f}x{on * 1e3:>13.1f}{on / d:>6.2f}x"
            print(f"{name:<32}{d * 1e3:>10.1f}{cells}")


if __name__ == "__main__":
    main()
