"""Benchmark: small concurrent requests into one table, in process -- the group commit.

    python bench/group_commit.py [--threads 8] [--requests 200] [--rows 1000]

``--requests`` NDJSON bodies of ``--rows`` bench/kafka messages each, with idempotency
keys, through ``WritePath.ingest_ndjson`` from ``--threads`` threads (embedded Postgres
catalog, local store). Prints rows/s, CPU a request and the snapshots made: without group
commit one a request; with it, requests waiting while a commit is in flight share one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kafka import message

from kyma.engine.storage.local import LocalStore
from kyma.runtime.postgres import EmbeddedPostgres
from kyma.services import wire_services
from kyma.settings import Settings
from kyma.stores import Stores

DDL = (
    "CREATE TABLE events (ts timestamp, service string, level string, user string,"
    " path string, status int, ms real)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    rows = args.rows
    bodies = [b"\n".join(message(i * rows + j) for j in range(rows)) for i in range(args.requests)]
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-group-"))
    pg = EmbeddedPostgres(work / "catalog", log=lambda _: None)
    url = pg.start()
    try:
        stores = Stores.open(url)
        settings = Settings(home=work / "home", catalog_url=url, ingest_workers=0)
        services = wire_services(settings, stores, LocalStore(work / "objects"))
        services.query.execute(DDL)
        ingest = services.write_path.ingest_ndjson
        started, cpu = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(args.threads) as pool:
            keys = [f"request-{i}" for i in range(len(bodies))]
            list(pool.map(lambda b, k: ingest("events", b, idempotency_key=k), bodies, keys))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        snapshots = len(services.catalog.snapshots("events"))
        print(
            f"{args.threads} threads, {args.requests} requests of {rows} rows: {wall:.1f} s,"
            f" {args.requests * rows / wall:,.0f} rows/s, CPU {cpu / args.requests * 1000:.0f} ms"
            f" a request, {snapshots} snapshots; load average {os.getloadavg()[0]:.1f}"
        )
        services.close()
        stores.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
