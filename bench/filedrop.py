"""Benchmark: a folder of NDJSON files through a file-drop source vs pyarrow's JSON reader.

    python bench/filedrop.py [--rows 1000000] [--files 10]

The OTel-shaped log rows of bench/ingest, written as ``--files`` NDJSON files in one
folder. The peer is ``pyarrow.json.read_json`` of each file (parse only, nothing stored).
kyma is a real ``kyma serve`` (embedded Postgres catalog, local store) given a file-drop
source on the folder by POST /v1/sources (poll_ms 200); the clock runs from the POST until
the source's status counts every file ingested, so it includes the scans, a SHA-256 of
every file, coercion, fsynced extents and the catalog commits. CPU seconds (the peer's
process, ``kyma serve``'s) are printed too: on a shared machine they move less than time.
``--option NAME=INT`` sets a file-drop setting for kyma (e.g. ``parallel_files=2``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow.json as pj
from _harness import Server
from _otel_logs import KYMA_DDL, generate, write_ndjson


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument(
        "--baseline",
        help="a folder holding another kyma package (e.g. an earlier commit's, laid out as"
        " installed) to measure in the same run, on the same files",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="a file-drop source setting for kyma (not the baseline), e.g. parallel_files=2",
    )
    args = parser.parse_args()
    options = {name: int(value) for name, _, value in (o.partition("=") for o in args.option)}
    # `python -m kyma serve` puts its working folder first on sys.path: from a checkout, that
    # would import the checkout's kyma/ over --baseline's
    os.chdir(tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix="kyma-bench-drop-"))
    per_file = args.rows // args.files
    for i in range(args.files):
        rows = generate(per_file, seed=i, offset=i * per_file, total=args.rows)
        write_ndjson(rows, folder / f"logs-{i:03d}.ndjson")
    files = sorted(folder.iterdir())
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    print(
        f"rows={args.rows:,} in {args.files} files, {size_mb:.0f} MB;"
        f" {platform.node()} {platform.machine()}"
    )

    start, start_cpu = time.perf_counter(), time.process_time()
    parsed = sum(pj.read_json(f).num_rows for f in files)
    arrow_s, arrow_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    assert parsed == per_file * args.files

    try:
        before = None
        if args.baseline:
            before = kyma_drop(folder, len(files), parsed, {}, PYTHONPATH=args.baseline)
        kyma = kyma_drop(folder, len(files), parsed, options)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"| pyarrow.json.read_json, parse only | {size_mb / arrow_s:.1f} MB/s | {arrow_s:.1f} s"
        f" | {arrow_cpu:.1f} CPU s |"
    )
    kyma_s, kyma_cpu = kyma
    print(
        f"| kyma file-drop source | {size_mb / kyma_s:.1f} MB/s | {kyma_s:.1f} s"
        f" | {kyma_cpu:.1f} CPU s |"
    )
    if before is not None:
        before_s, before_cpu = before
        print(
            f"| baseline kyma file-drop source | {size_mb / before_s:.1f} MB/s | {before_s:.1f} s"
            f" | {before_cpu:.1f} CPU s |"
        )
        print(
            f"baseline ÷ pyarrow read_json: {arrow_s / before_s:.2f}x"
            f" (CPU seconds: {arrow_cpu / before_cpu:.2f}x)"
        )
    cpu = arrow_cpu / kyma_cpu
    print(f"kyma ÷ pyarrow read_json: {arrow_s / kyma_s:.2f}x (CPU seconds: {cpu:.2f}x)")


def kyma_drop(
    folder: Path, files: int, rows: int, options: dict[str, int], **env: str
) -> tuple[float, float]:
    """Seconds from creating a file-drop source on ``folder`` until all ``files`` are in,
    and the CPU seconds ``kyma serve`` spent meanwhile (less noisy on a shared machine)."""
    server = Server(**env)
    try:
        server.sql(KYMA_DDL)
        body = {
            "name": "drops",
            "type": "filedrop",
            "table": "logs",
            "path": f"file://{folder}",
            "format": "ndjson",
            "poll_ms": 200,
            **options,
        }
        conn = server.connection()
        cpu = cpu_seconds(server.proc.pid)
        start = time.perf_counter()
        conn.request("POST", "/v1/sources", json.dumps(body), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        assert answer.status == 201, answer.read()
        answer.read()
        deadline = time.monotonic() + 3600
        while time.monotonic() < deadline:
            conn.request("GET", "/v1/sources/drops/status")
            status = json.loads(conn.getresponse().read())
            if status["files_ingested"] + status["files_failed"] == files:
                break
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(server.proc.pid) - cpu
        assert status["files_failed"] == 0, status
        count = server.sql("SELECT count(*) AS n FROM logs", conn)["rows"][0][0]
        assert count == rows, (count, rows)
    finally:
        server.stop()
    return seconds, cpu


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
