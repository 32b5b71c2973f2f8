"""Benchmark: scan-heavy queries over one kyma extent written with row groups of 8 k to 1 M rows.

    python bench/row_groups.py [--rows 1000000] [--repeat 5] [--blocks 8192,65536,...]

One extent of ``--rows`` OTel-shaped log rows (bench/_otel_logs.py; a compacted extent holds
up to ``KYMA_COMPACTION_TARGET_ROWS``, 1 M) is written by kyma's Parquet writer once per
block size, then each query runs ``--repeat`` times through DataFusion's Parquet scan (what a
kyma query's native scan is), interleaved across the block sizes; medians are reported with
the extent's size and write time. Ratios are against the smallest block size of the run.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from _otel_logs import START_NS, generate
from datafusion import SessionConfig, SessionContext

from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.storage.local import LocalStore

WINDOW = START_NS + 6 * 3600 * 10**9
QUERIES = {
    "count_filter": "SELECT count(*) FROM t WHERE severity = 'ERROR'",
    "group_by": "SELECT service_name, count(*), avg(duration_ms) FROM t"
    " GROUP BY service_name ORDER BY 2 DESC LIMIT 10",
    "like": "SELECT count(*) FROM t WHERE message LIKE '%timeout%'",
    "sum_all": "SELECT sum(duration_ms), max(trace_id), min(message) FROM t",
    "needle_time": "SELECT _timestamp, message FROM t WHERE service_name = 'svc-0042'"
    f" AND _timestamp >= arrow_cast({WINDOW}, 'Timestamp(Nanosecond, Some(\"UTC\"))')"
    f" AND _timestamp < arrow_cast({WINDOW + 300 * 10**9}, 'Timestamp(Nanosecond, Some(\"UTC\"))')",
    "needle_id": "SELECT count(*) FROM t WHERE trace_id = '00000000000003e8'",
}


def write(table: pa.Table, root: Path, block_rows: int) -> tuple[Path, float, int]:
    store = LocalStore(root / str(block_rows))
    start = time.perf_counter()
    writer = ParquetFormat(block_rows=block_rows).start_extent(store, table.schema, "t")
    for batch in table.to_batches(max_chunksize=50_000):
        writer.append(batch)
    result = writer.finish()
    return store.local_path(result.object_path), time.perf_counter() - start, result.byte_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--blocks", default="8192,65536,131072,262144,524288,1048576")
    args = parser.parse_args()
    sizes = [int(b) for b in args.blocks.split(",")]
    table = generate(args.rows, seed=11).drop_columns(["embedding"])
    table = table.rename_columns(["_timestamp", *table.column_names[1:]])
    root = Path(tempfile.mkdtemp(prefix="kyma-bench-rowgroups-"))
    print(f"rows={args.rows:,} machine: {platform.node()} {platform.machine()}")
    files = {b: write(table, root, b) for b in sizes}
    contexts = {}
    for b, (path, _, _) in files.items():
        ctx = SessionContext(SessionConfig().with_target_partitions(2))
        ctx.register_parquet("t", str(path))
        contexts[b] = ctx
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.repeat):
        for name, sql in QUERIES.items():
            for b, ctx in contexts.items():
                start = time.perf_counter()
                ctx.sql(sql).collect()
                times.setdefault((b, name), []).append(time.perf_counter() - start)
    base = sizes[0]
    print(f"{'block rows':>11}{'MB':>8}{'write s':>9}" + "".join(f"{q:>14}" for q in QUERIES))
    for b in sizes:
        _, write_s, size = files[b]
        cells = []
        for q in QUERIES:
            ms = statistics.median(times[(b, q)]) * 1e3
            ratio = ms / (statistics.median(times[(base, q)]) * 1e3)
            cells.append(f"{ms:>7.1f} {ratio:>5.2f}x")
        print(f"{b:>11}{size / 1e6:>8.2f}{write_s:>9.2f}" + "".join(f"{c:>14}" for c in cells))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
