"""Benchmark: Postgres CDC sync (snapshot, streaming, steady-state lag) against bare Postgres.

    python bench/cdc.py [--rows 5000000] [--changes 500000] [--transactions 50]
                        [--lag-seconds 30] [--rate 100] [--clients 2]
                        [--sync KEY=JSON ...] [--snapshot-runs 1] [--only snapshot]
                        [--json PATH]

Two Postgres servers from the system's binaries, started by kyma's EmbeddedPostgres in a
temp folder, loopback, TLS off: a **source** (``wal_level = logical``, ``max_wal_size =
4GB``) whose tables belong to a login role with REPLICATION, and kyma's **catalog**, which
``open_services`` starts (the embedded default; extents go to a local store). kyma's side
is a connector in mode ``sync`` with the default body, and a ``CdcWorker`` built as
``kyma serve`` builds it, driven through ``start()``, ``step()`` and ``run()`` only.

1. **Snapshot**: ``items`` (``--rows`` rows: bigint pk, int, 20-char text, numeric(10,2),
   timestamptz), VACUUM FREEZE ANALYZEd. Peer: ``COPY (SELECT * FROM items) TO STDOUT
   (FORMAT binary)`` read to the end through psycopg (one warm-up, median of
   ``--repeat``). kyma: ``worker.start()`` (publication, slot, exported snapshot, read,
   extents, one commit) → rows/s. The worker gets kyma's store as ``kyma serve`` gives it,
   so a table past the default ``sync.spark_min_bytes`` snapshots on Spark (its session
   started, and one Python task run, before the timing: Spark's start is reported apart);
   ``--sync spark_min_bytes=null`` (any key of the snapshot connector's ``sync``) changes that.
   ``--snapshot-runs N`` repeats COPY and a new connector's snapshot N times (the median run
   is reported); each also counts CPU seconds: the source's and kyma's catalog's Postgres
   processes and this process's tree (the driver, Spark's JVM and Python workers).
2. **Streaming**: kyma caught up, a second pgoutput slot ``bench_slot`` is created at that
   point; ``--changes`` row changes (UPDATEs of ranges and INSERTs of new rows, alternating)
   are written in ``--transactions`` transactions before anything is timed. Peer: ``SELECT
   count(*) FROM pg_logical_slot_get_binary_changes('bench_slot', …)`` with kyma's
   publication (the server decodes the same WAL and filters the same way, no client work).
   kyma: ``worker.step()`` until a peek finds nothing → changes/s. Before both, the backlog
   is read (not consumed) in four ways, timed: the server's count, a peek a row per message,
   kyma's aggregated peek, a START_REPLICATION stream (``_cdc_read.py``). Also CPU seconds (which,
   unlike wall time, hold still while other work shares the machine): the source's
   processes for the peer; the source's plus kyma's own process for kyma.
3. **Lag**: ``pgbench -i -s 1`` on the source (``pgbench_history`` gets a ``bigserial``
   primary key, as kyma syncs only tables with one), a ``probe`` table, all five synced by a
   second connector whose worker runs ``run(stop)`` in a thread (the loop ``kyma serve``
   runs). While ``pgbench -n -R --rate -T --lag-seconds -c --clients`` runs, a probe row with
   ``clock_timestamp()`` is committed every ``--probe-ms``; a poller queries kyma
   (``services.query.execute``) every ``--poll-ms`` for new probe rows; latency = when the
   poll that first returned the row came back − ``sent_at`` (same host clock).

Ratios are kyma ÷ peer rates, same run: below 1 means kyma is slower. The load average at the
start and end is printed (other work on the machine skews every figure).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from _cdc_lag import bench_lag
from _cdc_read import bench_reads
from _cdc_source import SECRET_ENV, Source, create_connector, kyma_rows, make_source, make_worker
from _harness import seconds

from kyma.connectors.postgres.cdc import CdcWorker, slot_name
from kyma.connectors.postgres.cdc._tables import SyncOptions
from kyma.runtime.postgres import EmbeddedPostgres
from kyma.services import Services, open_services
from kyma.settings import Settings

SOURCE_SETTINGS = "max_wal_size = '4GB'\nmax_replication_slots = 32\n"
BENCH_SLOT = "bench_slot"

LOAD = """
CREATE TABLE items (
    id bigint NOT NULL, n int NOT NULL, label text NOT NULL,
    amount numeric(10, 2) NOT NULL, updated_at timestamptz NOT NULL
);
INSERT INTO items
SELECT i, (i::bigint * 7919) % 100000, substr(md5(i::text), 1, 20),
       round(((i::bigint * 37) % 100000 / 100.0)::numeric, 2),
       timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second'
FROM generate_series(1, {rows}) AS i;
ALTER TABLE items ADD PRIMARY KEY (id);
"""
UPDATE = (
    "UPDATE items SET n = n + 1, amount = amount + 0.01, updated_at = now()"
    " WHERE id > {low} AND id <= {high}"
)
INSERT = (
    "INSERT INTO items SELECT i, i % 100000, substr(md5(i::text), 1, 20),"
    " round((i % 100000 / 100.0)::numeric, 2), now()"
    " FROM generate_series({low} + 1, {high}) AS i"
)


def server_cpu(data_dir: Path) -> float:
    """CPU seconds of the Postgres serving ``data_dir``: the postmaster, its ended backends
    (reaped, so counted in its children's time) and the live ones. CPU, unlike wall time,
    holds still while other work shares the machine."""
    tick = os.sysconf("SC_CLK_TCK")
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])

    def stat(pid: int | str) -> list[str]:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()

    total = sum(int(v) for v in stat(postmaster)[11:15])  # utime stime cutime cstime
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError):
            fields = stat(pid)
            if int(fields[1]) == postmaster:
                total += int(fields[11]) + int(fields[12])
    return total / tick


def drain(worker: CdcWorker, timeout: float) -> int:
    """``step()`` until a peek finds nothing; the source transactions applied."""
    deadline, total = time.monotonic() + timeout, 0
    while (applied := worker.step()) > 0:
        total += applied
        if time.monotonic() > deadline:
            raise TimeoutError(f"the slot still had changes after {timeout:.0f} s")
    return total


# ---------------------------------------------------------------- 1. snapshot


def load_items(source: Source, rows: int) -> int:
    started = time.perf_counter()
    source.execute(LOAD.format(rows=rows))
    source.execute("VACUUM (FREEZE, ANALYZE) items")
    with psycopg.connect(source.admin_url, autocommit=True) as admin:
        admin.execute("CHECKPOINT")
        size = admin.execute("SELECT pg_total_relation_size('items')").fetchone()[0]  # type: ignore[index]
    print(
        f"loaded items: {rows:,} rows, {size / 2**20:,.0f} MiB with its index,"
        f" in {time.perf_counter() - started:.0f} s"
    )
    ((table_bytes,),) = source.execute("SELECT pg_table_size('items')")
    return table_bytes


def copy_binary(source: Source) -> int:
    """Bytes of ``COPY (SELECT * FROM items) TO STDOUT (FORMAT binary)``, read to the end."""
    total = 0
    statement = "COPY (SELECT * FROM items) TO STDOUT (FORMAT binary)"
    with source.connect() as conn, conn.cursor() as cur, cur.copy(statement) as copy:
        for block in copy:
            total += len(block)
    return total


def catalog_dirs(home: Path) -> list[Path]:
    """The data folder of kyma's embedded catalog (none if the catalog is external)."""
    return [p.parent for p in home.rglob("postmaster.pid")]


def warm_spark(services: Services, table_bytes: int, options: dict[str, Any]) -> float | None:
    """When the table snapshots on Spark: start the session and run one Python task, so that
    the timed snapshot excludes Spark's start (the JVM, the first Python workers); seconds."""
    limit = options.get("spark_min_bytes", SyncOptions().spark_min_bytes)
    if limit is None or table_bytes < limit or not services.jobs.spark_available():
        return None
    from kyma.ingest.load import spark_session

    def start() -> None:
        session = spark_session(services.settings.spark_master)
        session.range(2, numPartitions=2).mapInArrow(lambda batches: batches, "id long").collect()

    return seconds(start)


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (Spark's JVM and Python workers), each
    with its reaped children's: every process counted once."""
    tick, parents, own = os.sysconf("SC_CLK_TCK"), {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            parents[int(pid)] = int(fields[1])
            own[int(pid)] = sum(int(v) for v in fields[11:15])
    tree, todo = {root}, [root]
    while todo:
        parent = todo.pop()
        children = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(children)
        todo.extend(children)
    return sum(own.get(p, 0) for p in tree) / tick


def cpu_parts(servers: list[Path]) -> dict[str, float]:
    """CPU seconds so far of the source's and the catalog's Postgres (``server_cpu``), this
    process and its descendants (Spark's JVM and Python workers)."""
    source, *catalog = servers
    own = time.process_time()
    return {
        "source": server_cpu(source),
        "catalog": sum(server_cpu(d) for d in catalog),
        "process": own,
        "spark": tree_cpu(os.getpid()) - own,
    }


def cpu_since(before: dict[str, float], servers: list[Path]) -> dict[str, float]:
    return {k: v - before[k] for k, v in cpu_parts(servers).items()}


def bench_snapshot(
    services: Services,
    source: Source,
    servers: list[Path],
    args: argparse.Namespace,
    options: dict[str, Any],
    table_bytes: int,
) -> tuple[dict, CdcWorker]:
    """``--snapshot-runs`` times: the peer's COPY (median of ``--repeat``), then a new
    connector's snapshot; both with their CPU (the source's, kyma's catalog's and this
    process's tree: the driver, Spark's JVM and Python workers)."""
    rows = args.rows
    nbytes = copy_binary(source)  # warm-up (and the page cache)
    spark_start_s = warm_spark(services, table_bytes, options)
    runs, worker = [], None
    try:
        for run in range(args.snapshot_runs):
            cpu = cpu_parts(servers)
            peer = [seconds(lambda: copy_binary(source)) for _ in range(args.repeat)]
            peer_cpu = sum(cpu_since(cpu, servers).values()) / args.repeat
            name = "snap" if run == 0 else f"snap{run}"
            create_connector(services, source, name, ["public.items"], **options)
            this = make_worker(services, name)
            if worker is None:
                worker = this  # the first one streams next
            try:
                cpu, load = cpu_parts(servers), os.getloadavg()[0]
                kyma_s = seconds(this.start)
                parts = cpu_since(cpu, servers)
                kyma_cpu = sum(parts.values())
                (got,) = kyma_rows(services, f"SELECT count(*) AS n FROM {name}.public.items")
                assert got["n"] == rows, f"kyma holds {got['n']} rows of {rows}"
            finally:
                if this is not worker:
                    this.close()
            peer_s = statistics.median(peer)
            runs.append(
                {
                    "load": load,
                    "peer_s": peer_s,
                    "kyma_s": kyma_s,
                    "ratio": peer_s / kyma_s,
                    "peer_cpu_s": peer_cpu,
                    "kyma_cpu_s": kyma_cpu,
                    "cpu_ratio": peer_cpu / kyma_cpu,
                    "kyma_cpu_parts_s": parts,
                }
            )
            print(
                f"snapshot run {run + 1}: COPY binary {rows / peer_s:,.0f} rows/s ({peer_s:.2f} s,"
                f" median of {args.repeat}, {peer_cpu:.1f} CPU s); kyma start()"
                f" {rows / kyma_s:,.0f} rows/s ({kyma_s:.2f} s, {kyma_cpu:.1f} CPU s):"
                f" {peer_s / kyma_s:.2f}x, CPU {peer_cpu / kyma_cpu:.2f}x (load {load:.1f});"
                f" kyma's CPU s: {', '.join(f'{k} {v:.1f}' for k, v in parts.items())}"
            )
    except BaseException:
        if worker is not None:
            worker.close()
        raise
    assert worker is not None
    middle = sorted(runs, key=lambda r: r["ratio"])[(len(runs) - 1) // 2]  # the median run
    result = {
        "rows": rows,
        "sync_options": options,
        "spark_available": services.jobs.spark_available(),
        "spark_start_s": spark_start_s,  # not in kyma_s
        "peer_copy_bytes": nbytes,
        **{k: middle[k] for k in ("peer_s", "kyma_s", "ratio", "peer_cpu_s", "kyma_cpu_s")},
        "peer_rows_per_s": rows / middle["peer_s"],
        "kyma_rows_per_s": rows / middle["kyma_s"],
        "cpu_ratio": statistics.median(r["cpu_ratio"] for r in runs),
        "runs": runs,
    }
    if spark_start_s is not None:
        print(f"snapshot: Spark started before the runs: {spark_start_s:.1f} s")
    return result, worker


# ---------------------------------------------------------------- 2. streaming


def write_changes(source: Source, rows: int, changes: int, transactions: int) -> None:
    """``changes`` row changes in ``transactions`` statements: UPDATE a range, INSERT new rows."""
    per = [changes // transactions + (i < changes % transactions) for i in range(transactions)]
    assert max(per) <= rows, f"--rows must hold one transaction's update ({max(per)} rows)"
    updated, next_id = 0, rows
    with source.connect() as conn:
        for i, k in enumerate(per):
            if i % 2 == 0:
                low = updated % (rows - k + 1)
                conn.execute(UPDATE.format(low=low, high=low + k))  # type: ignore[arg-type]
                updated += k
            else:
                conn.execute(INSERT.format(low=next_id, high=next_id + k))  # type: ignore[arg-type]
                next_id += k


def bench_streaming(
    services: Services,
    source: Source,
    data_dir: Path,
    worker: CdcWorker,
    rows: int,
    changes: int,
    transactions: int,
    timeout: float,
) -> dict:
    drain(worker, timeout)  # caught up: nothing pending before the bench slot's point
    publication = slot_name(worker.id)  # kyma names its publication after its slot
    source.execute(f"SELECT pg_create_logical_replication_slot('{BENCH_SLOT}', 'pgoutput')")
    try:
        write_s = seconds(lambda: write_changes(source, rows, changes, transactions))
        print(f"wrote {changes:,} changes in {transactions} transactions in {write_s:.1f} s")
        reads = bench_reads(source, BENCH_SLOT, publication, timeout)
        get = (
            f"SELECT count(*) FROM pg_logical_slot_get_binary_changes('{BENCH_SLOT}', NULL, NULL,"
            f" 'proto_version', '1', 'publication_names', '{publication}')"
        )
        messages = 0

        def peer() -> None:
            nonlocal messages
            ((messages,),) = source.execute(get)

        cpu = server_cpu(data_dir)
        peer_s = seconds(peer)
        peer_cpu = server_cpu(data_dir) - cpu
        applied = 0

        def kyma() -> None:
            nonlocal applied
            applied = drain(worker, timeout)

        cpu, own = server_cpu(data_dir), time.process_time()
        kyma_s = seconds(kyma)
        kyma_cpu = (server_cpu(data_dir) - cpu, time.process_time() - own)
    finally:
        with contextlib.suppress(psycopg.Error):
            source.execute(f"SELECT pg_drop_replication_slot('{BENCH_SLOT}')")
    assert applied == transactions, f"kyma applied {applied} transactions of {transactions}"
    check = "SELECT count(*) AS n, sum(n) AS s FROM {}"
    ((n, s),) = source.execute(check.format("items"))
    (got,) = kyma_rows(services, check.format("snap.public.items"))
    assert (got["n"], got["s"]) == (n, s), f"kyma {got} vs source {(n, s)}"
    print(
        f"streaming: slot get_binary_changes {changes / peer_s:,.0f} changes/s ({peer_s:.2f} s,"
        f" {messages:,} messages); kyma step() {changes / kyma_s:,.0f} changes/s ({kyma_s:.2f} s)"
    )
    print(
        f"streaming CPU: peer {peer_cpu:.2f} s in the source; kyma {kyma_cpu[0]:.2f} s in the"
        f" source + {kyma_cpu[1]:.2f} s in its own process (not counted: kyma's catalog)"
    )
    return {
        "changes": changes,
        "transactions": transactions,
        "read_paths_s": reads,
        "peer_messages": messages,
        "peer_s": peer_s,
        "peer_changes_per_s": changes / peer_s,
        "kyma_s": kyma_s,
        "kyma_changes_per_s": changes / kyma_s,
        "ratio": peer_s / kyma_s,
        "peer_source_cpu_s": peer_cpu,
        "kyma_source_cpu_s": kyma_cpu[0],
        "kyma_process_cpu_s": kyma_cpu[1],
        "cpu_ratio": peer_cpu / sum(kyma_cpu),
    }


# ---------------------------------------------------------------- 3. lag


# ---------------------------------------------------------------- main


def report(results: dict) -> None:
    snap, stream, lag = results["snapshot"], results["streaming"], results["lag"]
    print()
    print(f"| {'measure':<44} | {'kyma':>14} | {'peer':>14} | {'kyma ÷ peer':>11} |")
    print(f"|{'-' * 46}|{'-' * 16}|{'-' * 16}|{'-' * 13}|")
    print(
        f"| {'snapshot rows/s (peer: COPY binary)':<44} | {snap['kyma_rows_per_s']:>14,.0f}"
        f" | {snap['peer_rows_per_s']:>14,.0f} | {snap['ratio']:>10.2f}x |"
    )
    print(
        f"| {'snapshot CPU s (source, catalog, kyma tree)':<44} | {snap['kyma_cpu_s']:>14.1f}"
        f" | {snap['peer_cpu_s']:>14.1f} | {snap['cpu_ratio']:>10.2f}x |"
    )
    if stream is not None:
        print(
            f"| {'streaming changes/s (peer: slot get_changes)':<44}"
            f" | {stream['kyma_changes_per_s']:>14,.0f} | {stream['peer_changes_per_s']:>14,.0f}"
            f" | {stream['ratio']:>10.2f}x |"
        )
        cpu = stream["kyma_source_cpu_s"] + stream["kyma_process_cpu_s"]
        print(
            f"| {'streaming CPU s (peer: the source decoding)':<44} | {cpu:>14.2f}"
            f" | {stream['peer_source_cpu_s']:>14.2f} | {stream['cpu_ratio']:>10.2f}x |"
        )
    if lag is not None:
        print(
            f"| {'lag commit → visible, p50 / p99 ms':<44}"
            f" | {lag['lag_ms_p50']:>6.0f} / {lag['lag_ms_p99']:>5.0f} | {'':>14} | {'':>11} |"
        )
        print(
            f"lag: {lag['probes_seen']} probes (every {lag['probe_ms']} ms) over"
            f" {lag['seconds']} s of pgbench -R {lag['pgbench_rate']} -c {lag['pgbench_clients']}"
            f" ({lag['pgbench_tps'] or 0:.1f} tps, {lag['pgbench_transactions']:,} transactions);"
            f" max {lag['lag_ms_max']:.0f} ms; kyma polled every {lag['poll_ms']} ms"
            f" (query p50 {lag['poll_query_ms_p50']:.1f} ms), the worker's idle wait"
            f" {lag['worker_poll_ms']:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed COPY runs (median)")
    parser.add_argument(
        "--snapshot-runs",
        type=int,
        default=1,
        help="COPY then a new connector's snapshot, this many times (the median run reported)",
    )
    parser.add_argument("--changes", type=int, default=500_000)
    parser.add_argument("--transactions", type=int, default=50)
    parser.add_argument("--lag-seconds", type=int, default=30, help="0 skips the lag phase")
    parser.add_argument("--rate", type=int, default=100, help="pgbench -R")
    parser.add_argument("--clients", type=int, default=2, help="pgbench -c")
    parser.add_argument("--probe-ms", type=int, default=200)
    parser.add_argument("--poll-ms", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=3600, help="bound of each wait (s)")
    parser.add_argument(
        "--sync",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a key of the snapshot connector's sync section, e.g. spark_min_bytes=null",
    )
    parser.add_argument(
        "--only",
        choices=["snapshot"],
        help="run only this phase (iterate on the snapshot without streaming and lag)",
    )
    parser.add_argument("--json", default="-", help="file for the results ('-': stdout)")
    args = parser.parse_args()
    options = {k: json.loads(v) for k, _, v in (o.partition("=") for o in args.sync)}
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("kyma.connectors").setLevel(logging.ERROR)  # "TLS is disabled", per create
    print(
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, load average"
        f" {os.getloadavg()[0]:.1f}; rows={args.rows:,}"
        f" changes={args.changes:,}; source and catalog Postgres on loopback, TLS off"
    )
    results: dict[str, Any] = {
        "bench": "cdc",
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores",
        "args": vars(args),
        "load_average_start": os.getloadavg()[0],
    }
    # In /tmp: the servers run as the postgres user, which must reach their folders.
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-cdc-", dir="/tmp"))
    pg = EmbeddedPostgres(work / "source", log=lambda _: None, settings=SOURCE_SETTINGS)
    try:
        source = make_source(pg.start())
        os.environ[SECRET_ENV] = source.password
        table_bytes = load_items(source, args.rows)
        settings = Settings(home=work / "home")
        with (
            open_services(settings, log=lambda _: None) as services,
            contextlib.ExitStack() as stack,
        ):
            servers = [pg.data_dir, *catalog_dirs(settings.home)]
            results["snapshot"], worker = bench_snapshot(
                services, source, servers, args, options, table_bytes
            )
            results["snapshot"]["table_bytes"] = table_bytes
            stack.callback(worker.close)
            if args.only == "snapshot":
                results["streaming"] = results["lag"] = None
            else:
                _streaming_and_lag(services, source, pg, worker, stack, args, results)
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    results["load_average_end"] = os.getloadavg()[0]
    report(results)
    print(
        f"load average: {results['load_average_start']:.1f} at the start,"
        f" {results['load_average_end']:.1f} at the end"
    )
    text = json.dumps(results, indent=2, default=str)
    if args.json == "-":
        print(text)
    else:
        Path(args.json).write_text(text + "\n")
        print(f"results written to {args.json}")


def _streaming_and_lag(
    services: Services,
    source: Source,
    pg: EmbeddedPostgres,
    worker: CdcWorker,
    stack: contextlib.ExitStack,
    args: argparse.Namespace,
    results: dict[str, Any],
) -> None:
    results["streaming"] = bench_streaming(
        services,
        source,
        pg.data_dir,
        worker,
        args.rows,
        args.changes,
        args.transactions,
        args.timeout,
    )
    worker.close()
    results["lag"] = bench_lag(services, source, stack, args) if args.lag_seconds > 0 else None


if __name__ == "__main__":
    sys.exit(main())
