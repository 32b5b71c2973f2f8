"""Benchmark: Spark SQL over kyma tables -- natively (``read_table``) and through the Python
data source (``format("kyma")``) -- against Spark over the same Parquet files.

    python bench/spark_read.py [--rows 3000000] [--repeat 3] [--native-only]

The native path's peer is ``spark.read.parquet`` over the extents' own files (the same
bytes, no catalog), with the same nanosecond-to-microsecond timestamp conversion. The data
source's peer, as before, is Spark over the same rows written as Parquet by pyarrow.

The rows (bench/_otel_logs.py's day of logs, without the vector column) go into kyma through
the write path, 100 000 rows per extent, and into Parquet files of the same 100 000 rows
(zstd) with pyarrow. Spark runs in local[2]; each query runs ``--repeat`` times on a freshly
loaded DataFrame and the median is reported, with the Spark partitions each side planned.
``group_by_projected`` loads kyma with a three-column ``.schema(...)``: Python data sources
cannot prune columns themselves, Parquet's reader can.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _otel_logs import START_NS, generate
from query import median_seconds

from kyma.engine.catalog import Catalog, PostgresCatalog
from kyma.engine.format.choice import segment_format
from kyma.engine.spark import register
from kyma.engine.spark.native import NANOS_AS_LONG, read_table
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import Column, KymaType
from kyma.ingest.ledger import Ledger
from kyma.ingest.write_path import WritePath
from kyma.runtime.postgres import EmbeddedPostgres

CHUNK = 100_000
COLUMNS = {"service_name": "string", "severity": "string", "message": "string"}
COLUMNS |= {"trace_id": "string", "duration_ms": "long"}
WINDOW = (START_NS + 6 * 3600 * 10**9, START_NS + 6 * 3600 * 10**9 + 30 * 60 * 10**9)
AGGREGATE = (
    "SELECT service_name, count(*) AS n, avg(duration_ms) AS avg_ms FROM logs {where}"
    " GROUP BY service_name"
)


def _ts(ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ns // 10**9))


PROJECTED = "_timestamp timestamp, service_name string, duration_ms bigint"
START, END = (f"TIMESTAMP '{_ts(ns)}'" for ns in WINDOW)
RANGE = f"WHERE _timestamp >= {START} AND _timestamp < {END}"
FILTERS = {  # query -> its WHERE clause, and the schema kyma is loaded with (None: the table's)
    "group_by": ("", None),
    "group_by_projected": ("", PROJECTED),
    "group_by_30min": (RANGE, None),
}
PROJECTION = ["_timestamp", "service_name", "duration_ms"]


def chunks(rows: int):  # type: ignore[no-untyped-def]
    for offset in range(0, rows, CHUNK):
        table = generate(min(CHUNK, rows - offset), seed=29, offset=offset, total=rows)
        yield table.rename_columns({"timestamp": "_timestamp"}).select(["_timestamp", *COLUMNS])


def load(rows: int, work: Path, catalog: Catalog, store: LocalStore) -> None:
    catalog.create_table("logs", [Column(n, KymaType(t)) for n, t in COLUMNS.items()])
    write_path = WritePath(catalog, Ledger(catalog.db), store, segment_format())  # type: ignore[attr-defined]
    (work / "parquet").mkdir()
    for i, table in enumerate(chunks(rows)):
        write_path.ingest_batches("logs", table.to_batches(max_chunksize=CHUNK), source="bench")
        us = table.set_column(0, "_timestamp", table.column(0).cast(pa.timestamp("us", "UTC")))
        pq.write_table(us, work / "parquet" / f"part-{i:05d}.parquet", compression="zstd")


def spark_session():  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def python_read(options: dict[str, str]) -> float:
    """Seconds for the task function alone to read every extent, one after another."""
    from kyma.engine.query._scan import ScanStats
    from kyma.engine.spark import KymaDataSource, read_extent

    source = KymaDataSource(options)
    reader = source.reader(source.schema())
    start = time.perf_counter()
    for partition in reader.partitions():
        for _ in read_extent(reader, partition, ScanStats()):
            pass
    return time.perf_counter() - start


def native(spark, catalog: Catalog, store: LocalStore, options: dict, repeat: int) -> None:  # type: ignore[no-untyped-def, type-arg]
    """read_table vs spark.read.parquet over the same extent files, query by query."""
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    paths = [str(store.local_path(e.object_path)) for e in catalog.live_extents("logs")]
    window = [GreaterThanOrEqual(("_timestamp",), _dt(WINDOW[0]))]
    window.append(LessThan(("_timestamp",), _dt(WINDOW[1])))
    kyma_options = {k: v for k, v in options.items() if k != "table"}

    def native_df(sql: str, projected: bool, filtered: bool):  # type: ignore[no-untyped-def]
        columns = PROJECTION if projected else None
        frame = read_table(spark, "logs", columns, window if filtered else (), **kyma_options)
        frame.createOrReplaceTempView("logs")
        return spark.sql(sql)

    def files_df(sql: str):  # type: ignore[no-untyped-def]
        spark.conf.set(NANOS_AS_LONG, "true")
        frame = spark.read.parquet(*paths)
        ts = F.expr("timestamp_micros(_timestamp div 1000)")
        frame.withColumn("_timestamp", ts).createOrReplaceTempView("logs")
        return spark.sql(sql)

    plan_s = median_seconds(lambda: read_table(spark, "logs", **kyma_options), repeat)
    print(f"read_table's own work (catalog, stage 1, the DataFrame): {plan_s * 1000:.0f} ms")
    print(f"{'native query':<20}{'kyma s':>8}{'files s':>9}{'kyma vs files':>14}{'files read':>12}")
    for name, (where, schema) in FILTERS.items():
        sql = AGGREGATE.format(where=where)
        args = (schema is not None, bool(where))
        assert sorted(native_df(sql, *args).collect()) == sorted(files_df(sql).collect()), name
        kyma_s = median_seconds(lambda q=sql, a=args: native_df(q, *a).collect(), repeat)
        files_s = median_seconds(lambda q=sql: files_df(q).collect(), repeat)
        read = len(native_df("SELECT * FROM logs", *args).inputFiles())
        print(
            f"{name:<20}{kyma_s:>8.2f}{files_s:>9.2f}{files_s / kyma_s:>13.2f}x"
            f"{read:>6}/{len(paths)}"
        )


def _dt(ns: int):  # type: ignore[no-untyped-def]
    import datetime

    return datetime.datetime.fromtimestamp(ns / 1e9, datetime.UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--native-only", action="store_true", help="skip the data source")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-spark-", dir="/tmp"))
    pg = EmbeddedPostgres(work / "catalog", log=lambda _: None)
    try:
        catalog = PostgresCatalog.connect(pg.start())
        store = LocalStore(work / "objects")
        started = time.perf_counter()
        load(args.rows, work, catalog, store)
        print(
            f"rows={args.rows:,}; loaded in {time.perf_counter() - started:.1f}s;"
            f" {platform.node()} {platform.machine()}, {os.cpu_count()} cpus"
        )
        spark = spark_session()
        register(spark)
        options = {"table": "logs", "catalog_url": catalog.url, "object_store": store.url}

        def kyma_df(sql: str, schema: str | None = None):  # type: ignore[no-untyped-def]
            reader = spark.read.format("kyma").options(**options)
            (reader.schema(schema) if schema else reader).load().createOrReplaceTempView("logs")
            return spark.sql(sql)

        def parquet_df(sql: str):  # type: ignore[no-untyped-def]
            spark.read.parquet(str(work / "parquet")).createOrReplaceTempView("logs")
            return spark.sql(sql)

        print(f"kyma's read alone, in one process (no Spark): {python_read(options):.2f}s")
        native(spark, catalog, store, options, args.repeat)
        if not args.native_only:  # the Python data source against pyarrow's files
            print(
                f"{'query':<20}{'kyma s':>8}{'parquet s':>11}{'kyma vs pq':>11}{'kyma tasks':>12}"
                f"{'parquet tasks':>15}"
            )
            for name, (where, schema) in FILTERS.items():
                sql = AGGREGATE.format(where=where)
                kyma_rows = sorted(kyma_df(sql, schema).collect())
                parquet_rows = sorted(parquet_df(sql).collect())
                assert [r[:2] for r in kyma_rows] == [r[:2] for r in parquet_rows], name
                kyma_s = median_seconds(
                    lambda q=sql, s=schema: kyma_df(q, s).collect(), args.repeat
                )
                parquet_s = median_seconds(lambda q=sql: parquet_df(q).collect(), args.repeat)
                scan = f"SELECT * FROM logs {where}"
                tasks = [
                    df.rdd.getNumPartitions() for df in (kyma_df(scan, schema), parquet_df(scan))
                ]
                print(
                    f"{name:<20}{kyma_s:>8.2f}{parquet_s:>11.2f}{parquet_s / kyma_s:>10.2f}x"
                    f"{tasks[0]:>12}{tasks[1]:>15}"
                )
        spark.stop()
        catalog.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
