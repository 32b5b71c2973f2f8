"""Benchmark: the write path in process, by batch shape -- how big, and how many at once.

    python bench/write_shapes.py [--rows 600000] [--repeat 4]

bench/kafka's messages (~135 B of JSON each) as NDJSON bodies through
``WritePath.ingest_ndjson`` (embedded Postgres catalog, local store: coercion, fsynced
extents, one catalog commit per body), in four shapes, interleaved ``--repeat`` times:
one thread with 50 000-row bodies (a Kafka source's batch before issue 20), two threads
with 100 000 and 150 000-row bodies, one thread with half the rows per body. Prints wall
and CPU seconds of each run; the peer is the first shape, in the same run. CPU well under
wall says the time is waiting (fsyncs, the catalog's commit), which big batches amortize
and two threads overlap.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
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
    parser.add_argument("--rows", type=int, default=600_000)
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    rows = [message(i) for i in range(args.rows)]
    shapes = [(1, 50_000), (2, 100_000), (2, 150_000), (1, args.rows // 2)]
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-shapes-"))
    pg = EmbeddedPostgres(work / "catalog", log=lambda _: None)
    url = pg.start()
    walls: dict[tuple[int, int], list[float]] = {shape: [] for shape in shapes}
    cpus: dict[tuple[int, int], list[float]] = {shape: [] for shape in shapes}
    try:
        settings = Settings(home=work / "home", catalog_url=url)
        stores = Stores.open(url)
        services = wire_services(settings, stores, LocalStore(work / "objects"))
        services.query.execute(DDL)
        write_path = services.write_path
        write_path.ingest_ndjson("events", b"\n".join(rows[:1000]))  # warm up
        for _ in range(args.repeat):
            for threads, size in shapes:
                bodies = [b"\n".join(rows[i : i + size]) for i in range(0, len(rows), size)]
                wall, cpu = time.perf_counter(), time.process_time()
                with ThreadPoolExecutor(threads) as pool:
                    list(pool.map(lambda b: write_path.ingest_ndjson("events", b), bodies))
                walls[(threads, size)].append(time.perf_counter() - wall)
                cpus[(threads, size)].append(time.process_time() - cpu)
        services.close()
        stores.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    peer = min(walls[shapes[0]])
    print(f"rows={args.rows:,}, best and median of {args.repeat}, interleaved")
    print("| threads × rows a body | wall s (best, median) | CPU s (median) | rate ÷ first shape |")
    print("|---|---|---|---|")
    for shape in shapes:
        best, median = min(walls[shape]), statistics.median(walls[shape])
        cpu = statistics.median(cpus[shape])
        print(
            f"| {shape[0]} × {shape[1]:,} | {best:.2f}, {median:.2f} | {cpu:.2f} |"
            f" {peer / best:.2f}x |"
        )


if __name__ == "__main__":
    sys.exit(main())
