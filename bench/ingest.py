"""Benchmark: ingest rows/s through POST /v1/ingest in 10 000-line requests.

    python bench/ingest.py [--rows 10000000] [--clients 2]

Peers on the same NDJSON, in the same run: pyarrow.json.read_json alone (parse only, no
storage) and DuckDB's read_json loading a table. kyma does more than either (coercion,
CBOR for dynamic values, statistics, an fsynced extent and a catalog commit per request).
Also printed: the server's CPU time a request, which a busy shared machine moves less
than its wall time.
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

import duckdb
import pyarrow.json as pj
from _harness import Server
from _otel_logs import KYMA_DDL, chunks, generate, write_ndjson

LINES = 10_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--clients", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-ingest-"))
    path = work / "logs.ndjson"
    write_ndjson(generate(args.rows, seed=11), path)
    size_mb = path.stat().st_size / 1e6
    print(
        f"rows={args.rows:,} ndjson={size_mb:.0f} MB requests of {LINES} lines,"
        f" {args.clients} clients; {platform.node()} {platform.machine()}"
    )

    server = Server()
    try:
        server.sql(KYMA_DDL)
        cpu = cpu_seconds(server.proc.pid)
        start = time.perf_counter()
        rows = server.ingest("logs", chunks(path, LINES), clients=args.clients)
        kyma_s = time.perf_counter() - start
        cpu = cpu_seconds(server.proc.pid) - cpu
        assert rows == args.rows
        count = server.sql("SELECT count(*) FROM logs")["rows"][0][0]
        assert count == args.rows, count
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)

    start = time.perf_counter()
    parsed = sum(pj.read_json(io.BytesIO(body)).num_rows for body in chunks(path, LINES))
    arrow_s = time.perf_counter() - start
    assert parsed == args.rows

    start = time.perf_counter()
    con = duckdb.connect(str(work / "peer.duckdb"))
    con.execute(f"CREATE TABLE logs AS SELECT * FROM read_json('{path}')")
    duck_s = time.perf_counter() - start
    assert con.execute("SELECT count(*) FROM logs").fetchone()[0] == args.rows
    con.close()

    print(f"{'path':<34}{'rows/s':>12}{'MB/s':>8}")
    for name, seconds in (
        ("kyma POST /v1/ingest", kyma_s),
        ("pyarrow.json.read_json (parse only)", arrow_s),
        ("duckdb read_json into a table", duck_s),
    ):
        print(f"{name:<34}{args.rows / seconds:>12,.0f}{size_mb / seconds:>8.1f}")
    print(
        f"kyma vs pyarrow read_json: {arrow_s / kyma_s:.2f}x;"
        f" kyma vs duckdb read_json: {duck_s / kyma_s:.2f}x"
    )
    requests = -(-args.rows // LINES)
    print(
        f"kyma serve CPU: {cpu / requests * 1000:.0f} ms a request ({cpu:.1f} s,"
        f" {cpu / kyma_s:.2f} cores; the catalog's Postgres not counted);"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    shutil.rmtree(work, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (Linux ``/proc``): on a shared
    machine the cost of a request, where its wall time is mostly waiting for a core."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
