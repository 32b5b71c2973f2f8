"""Benchmark: DELETE of 0.1 % of a table's rows, and query time with deletion vectors and
after VACUUM, as ratios to the query time before.

    python bench/delete.py [--rows 10000000] [--repeat 5] [--extent-rows 500000]

kyma runs in process (``open_services``: an embedded Postgres catalog, a local object
store). The rows (n, a service name of 100, a duration) go through the write path in
``--extent-rows`` batches, one extent each. The DELETE (``n % 1000 = 7``) matches rows in
every extent, the worst case: each extent gets a deletion vector. Each query runs
``--repeat`` times per phase and the median is reported; the DELETE and VACUUM run once.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from query import median_seconds

from kyma.services import open_services
from kyma.settings import Settings

QUERIES = {
    "count": "SELECT count(*) FROM t",
    "group_by": "SELECT service, count(*) AS n, avg(duration) AS d FROM t GROUP BY service",
    "filter": "SELECT count(*) FROM t WHERE duration > 990",
    "needle": "SELECT n, duration FROM t WHERE n = 4242",
}


def batches(rows: int, size: int):
    services = np.array([f"svc-{i:03d}" for i in range(100)])
    rng = np.random.default_rng(7)
    for start in range(0, rows, size):
        n = np.arange(start, min(rows, start + size), dtype=np.int64)
        yield pa.record_batch(
            {
                "n": n,
                "service": pa.array(services[rng.integers(0, 100, len(n))]),
                "duration": rng.integers(0, 1000, len(n)),
            }
        )


def phase(query, repeat: int) -> dict[str, float]:
    return {name: median_seconds(lambda s=sql: query(s), repeat) for name, sql in QUERIES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--extent-rows", type=int, default=500_000)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="kyma-bench-delete-"))
    settings = Settings(home=home, snapshot_keep_seconds=0, gc_grace_seconds=0)
    try:
        with open_services(settings, log=lambda _: None) as services:
            engine = services.query
            engine.execute("CREATE TABLE t (n long, service string, duration long)")
            started = time.perf_counter()
            for batch in batches(args.rows, args.extent_rows):
                services.write_path.ingest_batches("t", [batch], source="bench")
            print(f"loaded {args.rows:,} rows in {time.perf_counter() - started:.1f} s")

            def query(sql: str) -> None:
                engine.execute(sql)

            before = phase(query, args.repeat)
            started = time.perf_counter()
            deleted = engine.execute("DELETE FROM t WHERE n % 1000 = 7").rowcount
            delete_s = time.perf_counter() - started
            with_vectors = phase(query, args.repeat)
            started = time.perf_counter()
            engine.execute("VACUUM t")
            vacuum_s = time.perf_counter() - started
            vacuumed = phase(query, args.repeat)
            left = engine.execute("SELECT count(*) FROM t").table.column(0)[0].as_py()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert left == args.rows - deleted, (left, deleted)
    print(f"{platform.machine()}, {args.rows:,} rows, {args.extent_rows:,} per extent")
    print(f"DELETE of {deleted:,} rows ({deleted / args.rows:.2%}): {delete_s:.2f} s")
    print(f"VACUUM: {vacuum_s:.2f} s")
    head = ("query", "before ms", "vectors ms", "ratio", "vacuumed ms", "ratio")
    print("{:<10} {:>10} {:>11} {:>6} {:>12} {:>6}".format(*head))
    for name, seconds in before.items():
        v, w = with_vectors[name], vacuumed[name]
        print(
            f"{name:<10} {seconds * 1e3:>10.1f} {v * 1e3:>11.1f} {v / seconds:>6.2f}"
            f" {w * 1e3:>12.1f} {w / seconds:>6.2f}"
        )


if __name__ == "__main__":
    main()
