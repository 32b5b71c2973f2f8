"""Benchmark: the write path in process (no HTTP), against its peers in the same run.

    python bench/ingest_inprocess.py [--rows 50000] [--profile]

Requests of 10 000 lines of bench/ingest's data through ``WritePath.ingest_ndjson``
(embedded Postgres catalog, local store), then ``coerce_ndjson`` alone, pyarrow's
``read_json`` alone and DuckDB's ``read_json`` into a table; best of 3, interleaved, so
the ratios hold on a busy machine, and the CPU time a request of kyma's two (the catalog's
Postgres not counted). ``--profile``: cProfile of one pass of the write path.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow.json as pj
from _otel_logs import KYMA_DDL, chunks, generate, write_ndjson

from kyma.engine.storage.local import LocalStore
from kyma.ingest.coerce import coerce_ndjson
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
        settings = Settings(home=work / "home", catalog_url=url)
        stores = Stores.open(url)
        services = wire_services(settings, stores, LocalStore(work / "objects"))
        services.query.execute(KYMA_DDL)
        catalog, write_path = services.catalog, services.write_path
        columns = catalog.get_table("logs").columns
        write_path.ingest_ndjson("logs", bodies[0])  # warm up
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(lambda: [write_path.ingest_ndjson("logs", b) for b in bodies])
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)

        def duck(rep: int) -> None:
            con = duckdb.connect(str(work / f"peer{rep}.duckdb"))
            con.execute(f"CREATE TABLE logs AS SELECT * FROM read_json('{path}')")
            con.close()

        runs = {
            "kyma WritePath.ingest_ndjson": lambda _: [
                write_path.ingest_ndjson("logs", b) for b in bodies
            ],
            "kyma coerce_ndjson alone": lambda _: [
                coerce_ndjson(b, columns, ingest_time_ns=0) for b in bodies
            ],
            "pyarrow.json.read_json": lambda _: [pj.read_json(io.BytesIO(b)) for b in bodies],
            "duckdb read_json into a table": duck,
        }
        best = {name: float("inf") for name in runs}
        cpu = {name: float("inf") for name in runs}
        for rep in range(3):
            for name, run in runs.items():
                start, started_cpu = time.perf_counter(), time.process_time()
                run(rep)
                best[name] = min(best[name], time.perf_counter() - start)
                cpu[name] = min(cpu[name], time.process_time() - started_cpu)
        services.close()
        stores.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    for name, seconds in best.items():
        print(f"{name:<32}{args.rows / seconds:>12,.0f} rows/s")
    for name in list(runs)[:2]:
        print(f"{name:<32}{cpu[name] / len(bodies) * 1000:>9.0f} ms CPU a request (this process)")
    kyma, coerce, arrow, duck = best.values()
    print(
        f"write path vs pyarrow: {arrow / kyma:.2f}x, vs duckdb: {duck / kyma:.2f}x;"
        f" coerce alone vs pyarrow: {arrow / coerce:.2f}x, vs duckdb: {duck / coerce:.2f}x"
    )


if __name__ == "__main__":
    main()
