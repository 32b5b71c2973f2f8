"""Benchmark: the write path in process (no HTTP), against its peers in the same run.

    python bench/ingest_inprocess.py [--rows 50000] [--profile]

Requests of 10 000 lines of bench/ingest's data through ``WritePath.ingest_ndjson``
(embedded Postgres catalog, local store) in process and with the ingest worker processes,
from one thread and from two, then ``coerce_ndjson`` alone, pyarrow's
``read_json`` alone and DuckDB's ``read_json`` into a table; best of 3, interleaved, so
the ratios hold on a busy machine, and the CPU time a request of kyma's runs (the catalog's
Postgres not counted). ``--profile``: cProfile of one pass of the write path.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pyarrow.json as pj
from _otel_logs import KYMA_DDL, chunks, generate, write_ndjson

from kyma.engine.storage.local import LocalStore
from kyma.ingest.coerce import coerce_ndjson
from kyma.ingest.write_path import WritePath
from kyma.runtime.postgres import EmbeddedPostgres
from kyma.services import wire_services
from kyma.settings import Settings
from kyma.stores import Stores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-inprocess-"))
    path = work / "logs.ndjson"
    write_ndjson(generate(args.rows, seed=11), path)
    bodies = list(chunks(path, 10_000))
    pg = EmbeddedPostgres(work / "catalog", log=lambda _: None)
    url = pg.start()
    try:
        settings = Settings(home=work / "home", catalog_url=url, ingest_workers=2)
        stores = Stores.open(url)
        services = wire_services(settings, stores, LocalStore(work / "objects"))
        services.query.execute(KYMA_DDL)
        catalog, pooled = services.catalog, services.write_path
        assert pooled.workers is not None
        local = WritePath(catalog, stores.ledger, pooled.store, pooled.format)
        columns = catalog.get_table("logs").columns
        threads = ThreadPoolExecutor(2)
        for write_path in (local, pooled):  # warm up (and start the workers)
            list(threads.map(lambda b, w=write_path: w.ingest_ndjson("logs", b), bodies[:2]))
        write_path = local
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(lambda: [write_path.ingest_ndjson("logs", b) for b in bodies])
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)

        def duck(rep: int) -> None:
            con = duckdb.connect(str(work / f"peer{rep}.duckdb"))
            con.execute(f"CREATE TABLE logs AS SELECT * FROM read_json('{path}')")
            con.close()

        def ingest(write_path: WritePath, clients: int) -> Callable[[int], object]:
            if clients == 1:
                return lambda _: [write_path.ingest_ndjson("logs", b) for b in bodies]
            one = write_path.ingest_ndjson
            return lambda _: list(threads.map(lambda b: one("logs", b), bodies))

        runs = {
            "kyma WritePath, in process": ingest(local, 1),
            "kyma WritePath, workers": ingest(pooled, 1),
            "kyma WritePath, in process, 2 thr": ingest(local, 2),
            "kyma WritePath, workers, 2 thr": ingest(pooled, 2),
            "kyma coerce_ndjson alone": lambda _: [  # as the write path coerces
                coerce_ndjson(b, columns, ingest_time_ns=0, deferred=True) for b in bodies
            ],
            "pyarrow.json.read_json": lambda _: [pj.read_json(io.BytesIO(b)) for b in bodies],
            "duckdb read_json into a table": duck,
        }
        best = {name: float("inf") for name in runs}
        cpu = {name: float("inf") for name in runs}
        for rep in range(3):
            for name, run in runs.items():
                start, started_cpu = time.perf_counter(), used_cpu(pooled)
                run(rep)
                best[name] = min(best[name], time.perf_counter() - start)
                cpu[name] = min(cpu[name], used_cpu(pooled) - started_cpu)
        threads.shutdown()
        services.close()
        stores.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    for name, seconds in best.items():
        print(f"{name:<36}{args.rows / seconds:>12,.0f} rows/s")
    for name in list(runs)[:5]:
        print(
            f"{name:<36}{cpu[name] / len(bodies) * 1000:>9.0f} ms CPU a request"
            " (this process and the workers)"
        )
    local1, pooled1, local2, pooled2, coerce, arrow, duck = best.values()
    for name, kyma in zip(runs, (local1, pooled1, local2, pooled2), strict=False):
        print(f"{name}: vs pyarrow {arrow / kyma:.2f}x, vs duckdb {duck / kyma:.2f}x")
    print(
        f"coerce alone vs pyarrow: {arrow / coerce:.2f}x, vs duckdb: {duck / coerce:.2f}x;"
        f" workers vs in process: 1 thread {local1 / pooled1:.2f}x,"
        f" 2 threads {local2 / pooled2:.2f}x; load average {os.getloadavg()[0]:.1f}"
    )


def used_cpu(pooled: WritePath) -> float:
    """CPU seconds of this process and of ``pooled``'s worker processes (Linux /proc)."""
    total = time.process_time()
    for pid in pooled.workers.pids() if pooled.workers else ():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


if __name__ == "__main__":
    main()
