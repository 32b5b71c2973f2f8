"""Catalog commits under load: commits/s with 1, 8 and 32 concurrent writers, to one table
and spread over 32 tables, with the CAS retries counted.

Each writer is a thread with a connection of its own (``Catalog.commit`` holds one for the
whole commit, retries included), committing one synthetic extent per snapshot -- what an
ingest batch commits -- for ``--seconds``; no object is written, so this is the catalog
alone. The catalog is kyma's own embedded Postgres (fsync on, as shipped). Per scenario:
commits/s, CAS retries (attempts past the first) per 100 commits, and p50/p99 latency.

    python bench/catalog_commits.py [--seconds 5] [--writers 1,8,32]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from kyma.engine.catalog import Catalog, PostgresCatalog
from kyma.engine.format import ExtentWriteResult
from kyma.engine.types import Column, KymaType
from kyma.runtime.postgres import EmbeddedPostgres

TABLES = 32
T0 = 1_767_225_600 * 10**9


def extent(table: str, n: int) -> ExtentWriteResult:
    at = T0 + n * 10**9
    return ExtentWriteResult(
        extent_id=str(uuid.uuid4()),
        object_path=f"tables/{table}/{uuid.uuid4().hex}.parquet",
        byte_size=1 << 20,
        row_count=1000,
        block_count=1,
        min_timestamp_nanos=at,
        max_timestamp_nanos=at + 10**9,
        present_paths=[],
        column_stats={"service": {"distinct": [f"svc-{n % 50}"], "tokens": ["svc", str(n % 50)]}},
        format="parquet",
    )


def run(catalog: Catalog, writers: int, tables: list[str], seconds: float) -> dict[str, float]:
    latencies: list[list[float]] = [[] for _ in range(writers)]
    retries = [0] * writers
    start = threading.Barrier(writers + 1)
    stop = threading.Event()

    def write(i: int) -> None:
        table = tables[i % len(tables)]
        start.wait()
        n = 0
        while not stop.is_set():
            began = time.perf_counter()
            result = catalog.commit(table, [extent(table, n)], summary={"source": "bench"})
            latencies[i].append(time.perf_counter() - began)
            retries[i] += result.attempts - 1
            n += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    every = sorted(x for each in latencies for x in each)
    commits = len(every)
    return {
        "commits_per_s": commits / elapsed,
        "retries_per_100": 100 * sum(retries) / max(1, commits),
        "p50_ms": 1000 * statistics.median(every),
        "p99_ms": 1000 * every[min(commits - 1, int(commits * 0.99))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--writers", default="1,8,32")
    args = parser.parse_args()
    counts = [int(w) for w in args.writers.split(",")]
    home = Path(tempfile.mkdtemp(prefix="kyma-bench-commits-", dir="/tmp"))
    with EmbeddedPostgres(home / "catalog") as pg:
        catalog = PostgresCatalog.connect(pg.url, pool_size=max(counts) + 2)
        try:
            names = [f"t{i:02d}" for i in range(TABLES)]
            for name in names:
                catalog.create_table(name, [Column("service", KymaType("string"))])
            print(
                f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus,"
                f" load average {os.getloadavg()[0]:.1f}; {args.seconds:.0f}s per scenario"
            )
            print(
                f"{'writers':>7} | {'tables':>6} | {'commits/s':>9} | {'retries/100':>11}"
                f" | {'p50 ms':>7} | {'p99 ms':>7}"
            )
            for writers in counts:
                for tables in (names[:1], names):
                    r = run(catalog, writers, tables, args.seconds)
                    print(
                        f"{writers:>7} | {min(writers, len(tables)):>6} |"
                        f" {r['commits_per_s']:>9.0f} | {r['retries_per_100']:>11.1f}"
                        f" | {r['p50_ms']:>7.1f} | {r['p99_ms']:>7.1f}"
                    )
        finally:
            catalog.close()


if __name__ == "__main__":
    main()
