"""Benchmark: write and read 5 million log rows as kyma's extents (Parquet, tlm) and as
pyarrow's Parquet (zstd) and Arrow IPC.

    python bench/format.py [--rows 5000000] [--repeat 3] [--dir /tmp/kyma-bench-format]
    python bench/format.py --dynamic-heavy --rows 300000   # sizes against DuckDB's Parquet

Prints MB/s (of the in-memory Arrow size) for write and for a full read (every block
read and every value touched by a min/max scan; warm page cache), bytes on disk, and the CPU
seconds of every thread (which a shared machine's load barely moves), with ratios against
the peers measured in the same run on the same table. Each format runs
``--repeat`` times, interleaved with the others, and keeps its best time: a shared machine's
noise then hits every format alike.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path

import cbor2
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kyma.engine.format import SegmentFormat
from kyma.engine.format.parquet import ParquetFormat
from kyma.engine.format.tlm import TlmFormat
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import DEFAULT_COLUMNS, Column, KymaType, arrow_schema

COLUMNS = [
    *DEFAULT_COLUMNS,
    Column("service_name", KymaType("string")),
    Column("level", KymaType("string")),
    Column("message", KymaType("string")),
    Column("trace_id", KymaType("string")),
    Column("duration_ms", KymaType("long")),
    Column("cpu", KymaType("real")),
    Column("attributes", KymaType("dynamic")),
]
SCHEMA = arrow_schema(COLUMNS)
VERBS = ["connect", "read", "write", "query", "publish", "render", "authorize", "charge"]
OBJECTS = ["database", "cache", "queue", "upstream", "session", "invoice", "bucket", "token"]
OUTCOMES = ["ok", "timeout", "refused", "retrying", "failed", "slow", "degraded", "done"]


def make_table(rows: int, seed: int = 7) -> pa.Table:
    """Log-shaped rows: 1 000 services, realistic message text, a CBOR attribute map."""
    rng = np.random.default_rng(seed)
    start = 1_767_225_600_000_000_000  # 2026-01-01
    ts = np.sort(start + rng.integers(0, 86_400_000_000_000, rows))
    services = pa.array([f"svc-{i:04d}" for i in range(1000)])
    pick = lambda values, n: pa.array(values).take(pa.array(rng.integers(0, len(values), n)))  # noqa: E731
    message = pc.binary_join_element_wise(
        pick(VERBS, rows),
        pick(OBJECTS, rows),
        pick(OUTCOMES, rows),
        pc.cast(pa.array(rng.integers(1, 5000, rows)), pa.string()),
        " ",
    )
    trace = pa.array(rng.integers(0, 2**62, rows)).cast(pa.string())
    pool = [
        cbor2.dumps({"http.method": m, "http.status_code": int(s), "user.id": f"u{u}"})
        for m, s, u in zip(
            rng.choice(["GET", "POST", "PUT"], 50_000),
            rng.choice([200, 201, 404, 500], 50_000),
            rng.integers(0, 20_000, 50_000),
            strict=True,
        )
    ]
    attributes = pa.array(pool, pa.binary()).take(pa.array(rng.integers(0, len(pool), rows)))
    return pa.Table.from_arrays(
        [
            pa.array(ts, pa.timestamp("ns", tz="UTC")),
            pa.nulls(rows, pa.binary()),
            services.take(pa.array(rng.integers(0, 1000, rows))),
            pick(["debug", "info", "warn", "error", "fatal"], rows),
            message,
            trace,
            pa.array(rng.integers(0, 10_000, rows)),
            pa.array(rng.random(rows)),
            attributes,
        ],
        schema=SCHEMA,
    )


def scan(table: pa.Table) -> int:
    """Touch every value (min/max compares every byte), so zero-copy reads pay too."""
    touched = 0
    for col in table.columns:
        pc.min_max(col)
        touched += len(col)
    return touched


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _cpu() -> float:
    """CPU seconds of every thread of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(write, read) -> dict:
    """Wall and CPU seconds of ``write()``, then of ``read(what write returned)``, which
    returns the table it read. CPU seconds count every thread, and barely move with the
    load of a shared machine where wall seconds do."""
    cpu = _cpu()
    write_s, written = timed(write)
    write_cpu, cpu = _cpu() - cpu, _cpu()
    read_s, back = timed(lambda: read(written))
    return {
        "write_s": write_s,
        "read_s": read_s,
        "write_cpu": write_cpu,
        "read_cpu": _cpu() - cpu,
        "rows": back.num_rows,
        "written": written,
    }


def bench_extent(table: pa.Table, root: Path, name: str, fmt: SegmentFormat) -> dict:
    store = LocalStore(root / name)

    def write():
        writer = fmt.start_extent(store, SCHEMA, "tables/1")
        for batch in table.to_batches(max_chunksize=65_536):
            writer.append(batch)
        return writer.finish()

    def read(result):
        reader = fmt.open_extent(store, result.object_path)
        blocks = reader.read_blocks(list(range(reader.metadata().block_count)))
        table = pa.Table.from_batches(blocks, SCHEMA)
        scan(table)
        return table

    r = measure(write, read)
    assert r["rows"] == table.num_rows
    store.delete(r["written"].object_path)
    return {**r, "bytes": r["written"].byte_size}


def _scanned(table: pa.Table) -> pa.Table:
    scan(table)
    return table


def bench_parquet(table: pa.Table, root: Path) -> dict:
    path = root / "t.parquet"
    r = measure(
        lambda: pq.write_table(table, path, compression="zstd"),
        lambda _: _scanned(pq.read_table(path)),
    )
    assert r["rows"] == table.num_rows
    return {**r, "bytes": path.stat().st_size}


def bench_ipc(table: pa.Table, root: Path) -> dict:
    path = root / "t.arrow"

    def write():
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, SCHEMA) as w:
            for batch in table.to_batches(max_chunksize=65_536):
                w.write_batch(batch)

    r = measure(write, lambda _: _scanned(pa.ipc.open_file(pa.memory_map(str(path))).read_all()))
    assert r["rows"] == table.num_rows
    return {**r, "bytes": path.stat().st_size}


OTEL_COLUMNS = [
    *DEFAULT_COLUMNS,
    Column("service_name", KymaType("string")),
    Column("severity", KymaType("string")),
    Column("message", KymaType("string")),
    Column("trace_id", KymaType("string")),
    Column("duration_ms", KymaType("long")),
    Column("attributes", KymaType("dynamic")),
]


def dynamic_heavy(rows: int, root: Path) -> None:
    """Sizes only: bench/_otel_logs.py's rows (high-cardinality ``user.id`` and ``url.path``,
    a nested ``client``) as one kyma extent, against DuckDB's Parquet (zstd) of the same rows
    with ``attributes`` as a JSON column."""
    import duckdb
    from _otel_logs import generate

    logs = generate(rows, seed=7)
    con = duckdb.connect()
    con.register("logs", logs)
    shaped = con.execute(
        """SELECT timestamp AS _timestamp, service_name, severity, message, trace_id,
                  duration_ms,
                  to_json({'http.method': http_method, 'http.status_code': http_status,
                           'user.id': user_id, 'url.path': url_path,
                           'client': {'address': '10.0.' || (client_port % 256) || '.'
                                      || (client_port // 256), 'port': client_port}})
                      AS attributes
           FROM logs"""
    ).to_arrow_table()
    peer = root / "duckdb.parquet"
    con.register("shaped", shaped)
    con.execute(f"COPY shaped TO '{peer}' (FORMAT parquet, COMPRESSION zstd)")
    texts = shaped.column("attributes").to_pylist()  # the bench's input, not kyma's path
    cbor = pa.array([cbor2.dumps(json.loads(t)) for t in texts], pa.binary())
    schema = arrow_schema(OTEL_COLUMNS)
    table = pa.Table.from_arrays(
        [
            shaped.column("_timestamp").cast(schema.field("_timestamp").type),
            pa.nulls(rows, pa.binary()),
            *[shaped.column(c) for c in ("service_name", "severity", "message", "trace_id")],
            shaped.column("duration_ms").cast(pa.int64()),
            cbor,
        ],
        schema=schema,
    )
    sizes = {"duckdb-parquet-zstd (JSON column)": peer.stat().st_size}
    for name, fmt in (
        ("kyma-parquet", ParquetFormat()),
        ("kyma-noshred", ParquetFormat(shred_paths=0)),
    ):
        store = LocalStore(root / name)
        start = time.perf_counter()
        writer = fmt.start_extent(store, schema, "tables/1")
        for batch in table.to_batches(max_chunksize=65_536):
            writer.append(batch)
        result = writer.finish()
        print(f"{name}: written in {time.perf_counter() - start:.2f} s")
        sizes[name] = result.byte_size
        columns = pq.ParquetFile(store.local_path(result.object_path)).metadata
        by_column: dict[str, int] = {}
        for g in range(columns.num_row_groups):
            for c in range(columns.num_columns):
                chunk = columns.row_group(g).column(c)
                top = chunk.path_in_schema.split(".")[0]
                top = "shredded paths" if top.startswith("__kyma/attributes") else top
                by_column[top] = by_column.get(top, 0) + chunk.total_compressed_size
        print(f"{name}: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in by_column.items()))
    peer_bytes = sizes["duckdb-parquet-zstd (JSON column)"]
    for name, size in sizes.items():
        print(f"{name:<36}{size / 1e6:>8.2f} MB  {size / peer_bytes:.2f}x DuckDB")
    shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument(
        "--dynamic-heavy",
        action="store_true",
        help="sizes of OTel rows with high-cardinality attributes against DuckDB's Parquet",
    )
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="kyma-bench-format-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.dynamic_heavy:
        dynamic_heavy(args.rows, root)
        return
    gen_s, table = timed(lambda: make_table(args.rows))
    mb = table.nbytes / 1e6
    print(f"rows={args.rows:,} arrow_size={mb:.0f} MB (generated in {gen_s:.1f}s)")
    print(
        f"machine: {platform.node()} {platform.machine()} python {platform.python_version()}"
        f" pyarrow {pa.__version__}"
    )
    runs = {
        "kyma-parquet": lambda: bench_extent(table, root, "kyma-parquet", ParquetFormat()),
        "kyma-noshred": lambda: bench_extent(
            table, root, "kyma-noshred", ParquetFormat(shred_paths=0)
        ),
        "tlm": lambda: bench_extent(table, root, "tlm", TlmFormat()),
        "tlm+zstd": lambda: bench_extent(table, root, "tlm+zstd", TlmFormat(compression="zstd")),
        "parquet-zstd": lambda: bench_parquet(table, root),
        "arrow-ipc": lambda: bench_ipc(table, root),
    }
    results: dict[str, dict] = {}
    for _ in range(args.repeat):
        for name, run in runs.items():
            r = run()
            best = results.setdefault(name, r)
            for key in ("write_s", "read_s", "write_cpu", "read_cpu"):
                best[key] = min(best[key], r[key])
    print(
        f"{'format':<14}{'write MB/s':>12}{'read MB/s':>12}{'on disk MB':>12}"
        f"{'write CPU s':>13}{'read CPU s':>12}"
    )
    for name, r in results.items():
        print(
            f"{name:<14}{mb / r['write_s']:>12.0f}{mb / r['read_s']:>12.0f}"
            f"{r['bytes'] / 1e6:>12.0f}{r['write_cpu']:>13.2f}{r['read_cpu']:>12.2f}"
        )
    for ours, peer in (
        ("kyma-parquet", "parquet-zstd"),
        ("kyma-noshred", "parquet-zstd"),
        ("kyma-parquet", "kyma-noshred"),
        ("tlm", "parquet-zstd"),
        ("tlm", "arrow-ipc"),
    ):
        o, p = results[ours], results[peer]
        print(
            f"{ours} vs {peer}: write {p['write_s'] / o['write_s']:.2f}x,"
            f" read {p['read_s'] / o['read_s']:.2f}x, size {o['bytes'] / p['bytes']:.2f}x;"
            f" CPU seconds: write {p['write_cpu'] / o['write_cpu']:.2f}x,"
            f" read {p['read_cpu'] / o['read_cpu']:.2f}x"
        )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
