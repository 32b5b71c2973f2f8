"""Benchmark: the Postgres wire protocol — a large result vs Flight SQL and HTTP Arrow, and
the point-query round trip vs a local Postgres.

    python bench/pgwire.py [--rows 1000000] [--repeat 3] [--points 1000]

A real ``kyma serve``; 2 500 rows go in through POST /v1/ingest and ``bench/flight.py``'s
cross join makes the result: ``--rows`` rows of (long, string, double). Every path runs the
same query and materialises it client-side: psycopg 3 in text and in binary format (Python
rows), Flight SQL through ADBC and HTTP Arrow IPC (Arrow tables). Median of ``--repeat``,
wall time and the CPU time of the server and of this client (steadier on a shared machine).
The server's peak resident memory above its idle one is read while psycopg binary runs, the
first path measured (VmHWM reset before it: later paths would find memory an earlier one
left resident, as allocators keep it).

Point queries: ``SELECT name FROM nums WHERE d = $1`` with a random key, ``--points`` times
on one psycopg connection (prepared after the first: Bind/Execute only), to kyma and to a
local Postgres (the system's binaries, stock settings, the same 2 500 rows, a primary key).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import adbc_driver_flightsql.dbapi
import psycopg
import pyarrow as pa
from _harness import Server, percentile
from flight import ARROW_STREAM, SIDE, query

from kyma.runtime.postgres import EmbeddedPostgres


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def reset_peak(pid: int) -> int:
    """Reset the process's peak resident memory to its current one; that, in bytes."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _status(pid, "VmRSS")


def peak(pid: int) -> int:
    """The process's peak resident memory since the last reset, in bytes."""
    return _status(pid, "VmHWM")


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(run: Callable[[], int], repeat: int, pid: int) -> tuple[float, int, float, float]:
    """Median wall seconds, rows, and the median CPU seconds of the server and of this
    client per run: on a shared machine CPU time moves less than wall time."""
    walls, servers, clients, rows = [], [], [], 0
    for _ in range(repeat):
        server, client, start = cpu_seconds(pid), time.process_time(), time.perf_counter()
        rows = run()
        walls.append(time.perf_counter() - start)
        servers.append(cpu_seconds(pid) - server)
        clients.append(time.process_time() - client)
    median = statistics.median
    return median(walls), rows, median(servers), median(clients)


def round_trips(dsn: str, count: int) -> list[float]:
    """Milliseconds of each point query, after a warm-up."""
    keys = random.Random(7).choices(range(SIDE), k=count)
    times = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for key in keys[:20]:
            conn.execute("SELECT name FROM nums WHERE d = %s", (key,), prepare=True).fetchall()
        for key in keys:
            start = time.perf_counter()
            rows = conn.execute(
                "SELECT name FROM nums WHERE d = %s", (key,), prepare=True
            ).fetchall()
            times.append((time.perf_counter() - start) * 1000)
            assert rows == [(f"name-{key:05d}",)], rows
    return times


def http_round_trips(server: Server, count: int) -> list[float]:
    """The same point queries through POST /v1/query, for reference."""
    conn, times = server.connection(), []
    for key in random.Random(7).choices(range(SIDE), k=count):
        start = time.perf_counter()
        rows = server.sql(f"SELECT name FROM nums WHERE d = {key}", conn)["rows"]
        times.append((time.perf_counter() - start) * 1000)
        assert rows == [[f"name-{key:05d}"]] or rows == [{"name": f"name-{key:05d}"}], rows
    return times


def local_postgres(work: Path) -> tuple[EmbeddedPostgres, str]:
    pg = EmbeddedPostgres(work / "pg", log=lambda _: None)
    url = pg.start()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE nums (d bigint PRIMARY KEY, name text)")
        with conn.cursor().copy("COPY nums FROM STDIN") as copy:
            for i in range(SIDE):
                copy.write_row((i, f"name-{i:05d}"))
        conn.execute("ANALYZE nums")
    return pg, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--points", type=int, default=1000)
    args = parser.parse_args()
    sql = query(args.rows)
    print(f"rows={args.rows:,}; points={args.points}; {platform.node()} {platform.machine()}")
    port = free_port()
    server = Server(KYMA_PG_PORT=str(port), KYMA_MAX_RESULT_ROWS="0", KYMA_MAX_RESULT_BYTES="0")
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-pg-", dir="/tmp"))
    postgres = None
    try:
        server.sql("CREATE TABLE nums (d long, name string)")
        body = "\n".join(json.dumps({"d": i, "name": f"name-{i:05d}"}) for i in range(SIDE))
        assert server.ingest("nums", [body.encode()]) == SIDE
        dsn = f"host=127.0.0.1 port={port} user=kyma dbname=kyma"
        pg = psycopg.connect(dsn, autocommit=True)
        flight = adbc_driver_flightsql.dbapi.connect(server.flight_url, autocommit=True)
        conn = server.connection()

        def via_psycopg(binary: bool) -> int:
            with pg.cursor(binary=binary) as cur:
                cur.execute(sql)
                return len(cur.fetchall())

        def via_flight() -> int:
            with flight.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table().num_rows

        def via_ipc() -> int:
            conn.request(
                "POST",
                "/v1/query",
                json.dumps({"sql": sql}),
                {"Content-Type": "application/json", "Accept": ARROW_STREAM},
            )
            answer = conn.getresponse()
            data = answer.read()
            assert answer.status == 200, data[:500]
            return pa.ipc.open_stream(data).read_all().num_rows

        with pg.cursor() as cur:  # warm up: the extents' pages, DataFusion's first plan
            cur.execute(f"{sql} LIMIT 10")
        idle = reset_peak(server.proc.pid)
        pid = server.proc.pid
        results = {"pgwire psycopg binary": measured(lambda: via_psycopg(True), args.repeat, pid)}
        peak_mb = (peak(server.proc.pid) - idle) / 2**20
        results["pgwire psycopg text"] = measured(lambda: via_psycopg(False), args.repeat, pid)
        results["Flight SQL (ADBC)"] = measured(via_flight, args.repeat, pid)
        results["HTTP Arrow IPC"] = measured(via_ipc, args.repeat, pid)
        flight.close()
        pg.close()
        base = results["Flight SQL (ADBC)"]
        print(
            f"{'path':<24}{'seconds':>9}{'Mrows/s':>9}{'vs Flight':>11}"
            f"{'server cpu':>12}{'client cpu':>12}{'cpu vs Flight':>15}"
        )
        for name, (seconds, rows, server_cpu, client_cpu) in results.items():
            assert rows == args.rows, (name, rows)
            ratio = (server_cpu + client_cpu) / (base[2] + base[3])
            print(
                f"{name:<24}{seconds:>9.2f}{rows / seconds / 1e6:>9.2f}{seconds / base[0]:>10.2f}x"
                f"{server_cpu:>12.2f}{client_cpu:>12.2f}{ratio:>14.2f}x"
            )
        print(f"server peak memory while psycopg binary ran: {peak_mb:.0f} MB above idle")

        postgres, url = local_postgres(work)
        print(f"\npoint query round trip, ms ({args.points} queries, one connection)")
        print(f"{'server':<24}{'p50':>9}{'p99':>9}")
        for name, target in (("kyma (pgwire)", dsn), ("Postgres 15", url)):
            times = round_trips(target, args.points)
            print(f"{name:<24}{percentile(times, 50):>9.2f}{percentile(times, 99):>9.2f}")
        times = http_round_trips(server, args.points)
        name = "kyma (HTTP /v1/query)"
        print(f"{name:<24}{percentile(times, 50):>9.2f}{percentile(times, 99):>9.2f}")
    finally:
        server.stop()
        if postgres is not None:
            postgres.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
