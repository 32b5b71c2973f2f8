"""Benchmark: ClickBench's 43 queries on a generated ``hits`` table, kyma against DuckDB
over the same rows as Parquet, with kyma's decoded-column cache off and on.

    python bench/clickbench.py [--rows 10000000] [--extent-rows 250000] [--repeat 3]

kyma runs in process (``open_services``: an embedded Postgres catalog, a local object
store); the rows (``_hits``: ClickBench's columns, generated) go through the write path in
``--extent-rows`` batches, one extent each, and into one Parquet file (zstd) for DuckDB.
Each query: one warm-up per engine, whose answers are compared (numbers to 9 significant
digits, rows in any order: a LIMIT after an ORDER BY with ties may keep other rows, so a
query that differs is listed to check by hand), then the median of ``--repeat`` runs. The
score is ClickBench's: the geometric mean over queries of (0.01 + kyma s) / (0.01 +
DuckDB s), once with ``KYMA_QUERY_CACHE_BYTES=0`` (every statement reads Parquet: the cold
path) and once with the default cache; beside it the same ratio of the process's CPU time
(all threads; both engines run in this process, one after the other), the firmer figure on
a shared machine. A query kyma refuses is listed and left out. ``--keep`` keeps the
generated rows, the Parquet file and kyma's home for the next run.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import shutil
import statistics
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from _hits import KYMA_DDL, QUERIES, batches

from kyma.engine.errors import KymaError
from kyma.engine.query import pg_numeric
from kyma.services import open_services
from kyma.settings import Settings


def timed(run, repeat: int) -> tuple[float, float]:
    """The medians of ``repeat`` runs: wall seconds and the process's CPU seconds."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def score(
    kyma: dict[int, tuple[float, float]], duck: dict[int, tuple[float, float]], i: int
) -> float:
    """ClickBench's geomean of wall (``i`` 0) or CPU (1) seconds."""
    ratios = [(0.01 + kyma[q][i]) / (0.01 + duck[q][i]) for q in kyma]
    return math.exp(sum(map(math.log, ratios)) / len(ratios))


def _cell(v: object) -> object:
    if isinstance(v, int | float | Decimal) and not isinstance(v, bool):
        return float(f"{float(v):.9g}")
    if isinstance(v, datetime.datetime):
        return v.timestamp()
    return v


def rows(table: pa.Table) -> list[tuple[object, ...]]:
    """The answer's rows, comparable across engines and in any order."""
    return sorted((tuple(_cell(v) for v in r.values()) for r in table.to_pylist()), key=repr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--extent-rows", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", type=str, default="", help="query numbers, e.g. 0,23,42")
    parser.add_argument("--cache", choices=["off", "on", "both"], default="both")
    parser.add_argument("--keep", type=Path, help="a folder to keep the data in, and reuse")
    args = parser.parse_args()
    chosen = [int(q) for q in args.only.split(",")] if args.only else range(len(QUERIES))
    work = args.keep or Path(tempfile.mkdtemp(prefix="kyma-bench-hits-"))
    work.mkdir(parents=True, exist_ok=True)
    loaded = (work / "home").exists()
    if not loaded:
        started = time.perf_counter()
        writer = None
        for batch in batches(args.rows, args.extent_rows):
            schema = batch.schema
            writer = writer or pq.ParquetWriter(work / "hits.parquet", schema, compression="zstd")
            writer.write_batch(batch)
        writer.close()
        print(f"generated {args.rows:,} rows in {time.perf_counter() - started:.1f} s")
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.execute(f"CREATE VIEW hits AS SELECT * FROM read_parquet('{work / 'hits.parquet'}')")
    modes = {"off": [0], "on": [512 * 1024 * 1024], "both": [0, 512 * 1024 * 1024]}[args.cache]
    home = work / "home"
    results: dict[int, dict[int, tuple[float, float]]] = {}
    duck_s: dict[int, tuple[float, float]] = {}
    refused: dict[int, str] = {}
    differ: set[int] = set()
    try:
        for cache in modes:
            settings = Settings(home=home, query_cache_bytes=cache)
            with open_services(settings, log=lambda _: None) as services:
                engine = services.query
                if not loaded:
                    started = time.perf_counter()
                    engine.execute(KYMA_DDL)
                    source = pq.ParquetFile(work / "hits.parquet")
                    for i in range(source.num_row_groups):
                        group = source.read_row_group(i).to_batches()
                        services.write_path.ingest_batches("hits", group, source="bench")
                    print(f"loaded in {time.perf_counter() - started:.1f} s")
                    loaded = True
                kyma_s: dict[int, tuple[float, float]] = {}
                for q in chosen:
                    sql = QUERIES[q]
                    try:
                        got = pg_numeric.decimals(engine.execute(sql).table)
                    except KymaError as e:
                        refused[q] = f"{type(e).__name__}: {e}"[:120]
                        continue
                    expected = duck.sql(sql).to_arrow_table()
                    if got.column_names != expected.column_names:  # SELECT *: kyma's props
                        common = [n for n in got.column_names if n in expected.column_names]
                        got, expected = got.select(common), expected.select(common)
                    if rows(got) != rows(expected):
                        differ.add(q)
                    if q not in duck_s:
                        duck_s[q] = timed(lambda s=sql: duck.sql(s).to_arrow_table(), args.repeat)
                    kyma_s[q] = timed(lambda s=sql, e=engine: e.execute(s), args.repeat)
                    (wall, cpu), (dwall, dcpu) = kyma_s[q], duck_s[q]
                    print(
                        f"cache {cache >> 20} MiB Q{q}: kyma {wall * 1e3:.0f} ms (CPU"
                        f" {cpu * 1e3:.0f}), DuckDB {dwall * 1e3:.0f} ms (CPU {dcpu * 1e3:.0f})",
                        flush=True,
                    )
                results[cache] = kyma_s
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, {args.rows:,} rows,")
    print(f"{args.extent_rows:,} rows per extent, median of {args.repeat}, load {os.getloadavg()}")
    head = "".join(f"{'cache ' + str(c >> 20) + ' MiB (wall, CPU)':>30}" for c in results)
    print(f"{'query':<6}{'duckdb ms':>10}{head}")
    for q in chosen:
        if q in refused:
            print(f"Q{q:<5}refused: {refused[q]}")
            continue
        cells = "".join(
            f"{r[q][0] * 1e3:>9.1f} {(0.01 + r[q][0]) / (0.01 + duck_s[q][0]):>5.2f}x"
            f" {(0.01 + r[q][1]) / (0.01 + duck_s[q][1]):>8.2f}x"
            for r in results.values()
        )
        print(f"Q{q:<5}{duck_s[q][0] * 1e3:>10.1f}{cells}")
    for cache, kyma_s in results.items():
        walls, cpus = score(kyma_s, duck_s, 0), score(kyma_s, duck_s, 1)
        print(
            f"geomean (0.01+kyma)/(0.01+duckdb), cache {cache >> 20} MiB:"
            f" wall {walls:.2f}, CPU {cpus:.2f}"
        )
    if differ:
        print(f"answers differ from DuckDB's (ties under a LIMIT?): {sorted(differ)}")


if __name__ == "__main__":
    main()
