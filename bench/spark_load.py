"""Benchmark: a Spark bulk load of NDJSON vs DuckDB loading the same files; compaction MB/s.

    python bench/spark_load.py [--rows 20000000] [--files 20] [--masters local[2],standalone]

Narrow event rows (timestamp, service, level, status, latency; ~110 B of NDJSON each) in
``--files`` files. kyma: ``run_load`` (what ``kyma load`` runs) on each Spark master into
an embedded catalog and local store: hashing, planning, tasks coercing and writing extents,
one commit. ``standalone`` is a cluster started here from pyspark's distribution (a master
and two workers of 1 core and 512 MiB on loopback, tests/spark/spark_cluster.py). Peer:
DuckDB's ``read_json`` into a table, same files, same machine.
Compaction: 300 extents of 10 000 rows each (written through the write path) merged into
1 000 000-row extents; MB/s of extents read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.compaction import compact_table
from kyma.ingest.load import LoadRequest, StoreConfig, run_load, spark_session
from kyma.services import open_services
from kyma.settings import Settings

DDL = "CREATE TABLE events (service string, level string, status int, ms real)"
TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "spark")]  # the cluster the tests start


def write_files(folder: Path, rows: int, files: int) -> int:
    per = rows // files
    for i in range(files):
        rng = np.random.default_rng(i)
        ts = 1_763_700_000_000_000_000 + (np.arange(i * per, (i + 1) * per) * 1_000_000)
        text = lambda values: pa.array(values.astype(str))  # noqa: E731
        lines = pc.binary_join_element_wise(
            '{"_timestamp": ',
            text(ts),
            ', "service": "svc-',
            text(rng.integers(0, 200, per)),
            '", "level": "',
            pa.array(np.array(["INFO", "WARN", "ERROR"])[rng.integers(0, 3, per)]),
            '", "status": ',
            text(rng.choice([200, 201, 404, 500], per)),
            ', "ms": ',
            text(np.round(rng.gamma(2.0, 20.0, per), 3)),
            "}\n",
            "",
        )
        if isinstance(lines, pa.ChunkedArray):
            lines = lines.combine_chunks()
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
        start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
        (folder / f"part-{i:03d}.ndjson").write_bytes(lines.buffers()[2].to_pybytes()[start:end])
    return per * files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--masters", default="local[2],standalone")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-spark-", dir="/tmp"))
    data = work / "in"
    data.mkdir()
    rows = write_files(data, args.rows, args.files)
    size_mb = sum(f.stat().st_size for f in data.iterdir()) / 1e6
    print(
        f"rows={rows:,} in {args.files} files, {size_mb:.0f} MB; {platform.node()}"
        f" {platform.machine()}, load average {os.getloadavg()[0]:.1f}"
    )

    con = duckdb.connect(str(work / "duck.db"))
    start = time.perf_counter()
    con.execute(f"CREATE TABLE events AS SELECT * FROM read_json('{data}/*.ndjson')")
    duck_s = time.perf_counter() - start
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == rows
    con.close()

    from spark_cluster import DRIVER_ENV, start_cluster

    os.environ.update(DRIVER_ENV)  # before the driver's JVM starts: executors fit the workers
    loads: dict[str, float] = {}
    cluster = None
    for master in args.masters.split(","):
        if master == "standalone":
            cluster = start_cluster(work / "cluster")
        try:
            loads[master] = load(work, data, rows, cluster.master if cluster else master)
            print(f"{master}: {loads[master]:.1f} s", flush=True)
        finally:
            if cluster is not None:
                cluster.stop()
                cluster = None
    result, compact_s = compaction(work)
    shutil.rmtree(work, ignore_errors=True)
    print(f"| DuckDB read_json into a table | {rows / duck_s:,.0f} rows/s | {duck_s:.1f} s |")
    for master, kyma_s in loads.items():
        print(f"| kyma load on Spark {master} | {rows / kyma_s:,.0f} rows/s | {kyma_s:.1f} s |")
        print(f"kyma on {master} ÷ DuckDB: {duck_s / kyma_s:.2f}x")
    print(
        f"compaction: {result.extents_in} extents -> {result.extents_out},"
        f" {result.bytes_in / 1e6:.0f} MB in {compact_s:.1f} s:"
        f" {result.bytes_in / 1e6 / compact_s:.1f} MB/s"
    )


def load(work: Path, data: Path, rows: int, master: str) -> float:
    """Seconds ``run_load`` takes on ``master`` (its Spark session started beforehand)."""
    home = work / f"home-{len(list(work.glob('home-*')))}"
    with open_services(Settings(home=home, spark_master=master)) as services:
        services.query.execute(DDL)
        spark = spark_session(master)
        spark.sparkContext.setLogLevel("ERROR")
        store = StoreConfig(url=services.store.url, cache_dir=str(work / "cache"))
        start = time.perf_counter()
        ack = run_load(spark, services.write_path, store, LoadRequest("events", str(data)))
        seconds = time.perf_counter() - start
        assert ack.rows == rows, ack
        spark.stop()
    return seconds


def compaction(work: Path):  # type: ignore[no-untyped-def]
    """300 extents of 10 000 rows compacted in process: the result and its seconds."""
    with open_services(Settings(home=work / "home-compaction")) as services:
        services.query.execute("CREATE TABLE small (service string, n long)")
        for i in range(300):
            body = "\n".join(
                json.dumps({"service": f"s{j % 50}", "n": i * 10_000 + j}) for j in range(10_000)
            )
            services.write_path.ingest_ndjson("small", body.encode())
        start = time.perf_counter()
        result = compact_table(services.catalog, services.store, services.format, "small")
        return result, time.perf_counter() - start


if __name__ == "__main__":
    main()
