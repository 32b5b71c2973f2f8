"""Benchmark: ingest rows/s through POST /v1/ingest.

    python bench/ingest.py [--data logs|hits] [--rows 10000000] [--clients 2] [--repeats 2]

``--data logs``: bench/_otel_logs' rows (a dynamic attribute map with high-cardinality
values, an embedding) in 10 000-line requests; ``--data hits``: a synthetic 30-column
ClickBench ``hits`` (bench/_hits) in 50 000-line requests. Peers on the same NDJSON, in
the same run: pyarrow.json.read_json alone (parse only, no storage) and DuckDB's read_json
loading a table. kyma does more than either (coercion,
CBOR for dynamic values, statistics, an fsynced extent and a catalog commit per request).
kyma runs with its ingest worker processes off (KYMA_INGEST_WORKERS=0, the default) and
on (2), interleaved with the peers, best of ``--repeats``. Also printed: the CPU time a
request of the server and its workers, which a busy shared machine moves less than its
wall time.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import _hits_ndjson as _hits
import _otel_logs
import duckdb
import pyarrow.json as pj
from _harness import Server
from _otel_logs import chunks

LINES = {"logs": 10_000, "hits": 50_000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many kyma runs")
    parser.add_argument("--data", choices=sorted(LINES), default="logs")
    parser.add_argument("--workers", default="0,2", help="KYMA_INGEST_WORKERS values to run")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-ingest-"))
    path = work / f"{args.data}.ndjson"
    lines = LINES[args.data]
    if args.data == "hits":
        table, ddl = "hits", _hits.DDL
        _hits.write_ndjson(_hits.generate(args.rows), path)
    else:
        table, ddl = "logs", _otel_logs.KYMA_DDL
        _otel_logs.write_ndjson(_otel_logs.generate(args.rows, seed=11), path)
    size_mb = path.stat().st_size / 1e6
    print(
        f"rows={args.rows:,} ndjson={size_mb:.0f} MB requests of {lines} lines,"
        f" {args.clients} clients; {platform.node()} {platform.machine()}"
    )

    # kyma with the ingest workers off (KYMA_INGEST_WORKERS=0) and on, and the peers,
    # interleaved: best of each.
    kyma_runs: dict[str, list[tuple[float, float]]] = {w: [] for w in args.workers.split(",")}
    arrow_s = duck_s = float("inf")
    for rep in range(args.repeats):
        for workers in kyma_runs:
            run = run_kyma(path, args.rows, args.clients, workers, table, ddl, lines)
            kyma_runs[workers].append(run)
        start = time.perf_counter()
        parsed = sum(pj.read_json(io.BytesIO(body)).num_rows for body in chunks(path, lines))
        arrow_s = min(arrow_s, time.perf_counter() - start)
        assert parsed == args.rows

        start = time.perf_counter()
        con = duckdb.connect(str(work / f"peer{rep}.duckdb"))
        con.execute(f"CREATE TABLE t AS SELECT * FROM read_json('{path}')")
        duck_s = min(duck_s, time.perf_counter() - start)
        assert con.execute("SELECT count(*) FROM t").fetchone()[0] == args.rows
        con.close()

    best = {w: min(runs) for w, runs in kyma_runs.items()}
    names = {w: f"kyma POST /v1/ingest, {w} workers" for w in best}
    print(f"{'path':<40}{'rows/s':>12}{'MB/s':>8}")
    for name, seconds in (
        *((names[w], best[w][0]) for w in best),
        ("pyarrow.json.read_json (parse only)", arrow_s),
        ("duckdb read_json into a table", duck_s),
    ):
        print(f"{name:<40}{args.rows / seconds:>12,.0f}{size_mb / seconds:>8.1f}")
    requests = -(-args.rows // lines)
    for workers, (kyma_s, cpu) in best.items():
        print(
            f"{names[workers]}: vs pyarrow read_json {arrow_s / kyma_s:.2f}x,"
            f" vs duckdb read_json {duck_s / kyma_s:.2f}x; CPU {cpu / requests * 1000:.0f} ms"
            f" a request ({cpu:.1f} s, {cpu / kyma_s:.2f} cores; server and its workers, the"
            " catalog's Postgres not counted)"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(work, ignore_errors=True)


def run_kyma(
    path: Path, rows: int, clients: int, workers: str, table: str, ddl: str, lines: int
) -> tuple[float, float]:
    """Seconds and CPU seconds (the server and its worker processes) of one load of
    ``path``; ``workers`` is KYMA_INGEST_WORKERS ("0": none, the default)."""
    server = Server(**({"KYMA_INGEST_WORKERS": workers} if workers else {}))
    try:
        server.sql(ddl)
        cpu = tree_cpu_seconds(server.proc.pid)
        start = time.perf_counter()
        sent = server.ingest(table, chunks(path, lines), clients=clients)
        seconds = time.perf_counter() - start
        cpu = tree_cpu_seconds(server.proc.pid) - cpu
        assert sent == rows
        count = server.sql(f"SELECT count(*) FROM {table}")["rows"][0][0]
        assert count == rows, count
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
    return seconds, cpu


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of process ``pid`` and its Python descendants (the ingest workers, the
    forkserver), not the Postgres it started."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    total, todo = cpu_seconds(pid), list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo += children.get(child, [])
        try:
            if "python" in Path(f"/proc/{child}/comm").read_text():
                total += cpu_seconds(child)
        except FileNotFoundError:
            pass
    return total


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (Linux ``/proc``): on a shared
    machine the cost of a request, where its wall time is mostly waiting for a core."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
