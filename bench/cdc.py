"""Benchmark: Postgres CDC sync (snapshot, streaming, steady-state lag) against bare Postgres.

    python bench/cdc.py [--rows 5000000] [--changes 500000] [--transactions 50]
                        [--lag-seconds 30] [--rate 100] [--clients 2]
                        [--sync KEY=JSON ...] [--json PATH]

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
   so a table past the default ``sync.spark_min_bytes`` snapshots on Spark; ``--sync
   spark_min_bytes=null`` (any key of the snapshot connector's ``sync``) changes that.
2. **Streaming**: kyma caught up, a second pgoutput slot ``bench_slot`` is created at that
   point; ``--changes`` row changes (UPDATEs of ranges and INSERTs of new rows, alternating)
   are written in ``--transactions`` transactions before anything is timed. Peer: ``SELECT
   count(*) FROM pg_logical_slot_get_binary_changes('bench_slot', …)`` with kyma's
   publication (the server decodes the same WAL and filters the same way, no client work).
   kyma: ``worker.step()`` until a peek finds nothing → changes/s.
3. **Lag**: ``pgbench -i -s 1`` on the source (``pgbench_history`` gets a ``bigserial``
   primary key, as kyma syncs only tables with one), a ``probe`` table, all five synced by a
   second connector whose worker runs ``run(stop)`` in a thread (the loop ``kyma serve``
   runs). While ``pgbench -n -R --rate -T --lag-seconds -c --clients`` runs, a probe row with
   ``clock_timestamp()`` is committed every ``--probe-ms``; a poller queries kyma
   (``services.query.execute``) every ``--poll-ms`` for new probe rows; latency = when the
   poll that first returned the row came back − ``sent_at`` (same host clock).

Ratios are kyma ÷ peer rates: below 1 means kyma is slower.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from kyma.connectors.postgres.cdc import CdcWorker, SparkTarget, slot_name
from kyma.runtime.postgres import EmbeddedPostgres, find_pg_bin_dir
from kyma.services import Services, open_services
from kyma.settings import Settings

SECRET_ENV = "KYMA_BENCH_CDC_PASSWORD"
ROLE, DATABASE = "bench_cdc", "bench"
SOURCE_SETTINGS = "max_wal_size = '4GB'\nmax_replication_slots = 32\n"
BENCH_SLOT = "bench_slot"
PGBENCH_TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]

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


@dataclass(frozen=True)
class Source:
    admin_url: str  # the superuser, on the bench database
    url: str  # as ROLE, without its password
    password: str

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.url, password=self.password, autocommit=True)

    def execute(self, text: str) -> list[tuple]:
        with self.connect() as conn:
            cur = conn.execute(text)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def libpq_env(self) -> dict[str, str]:
        parts = urlsplit(self.url)
        return {
            **os.environ,
            "PGHOST": parts.hostname or "127.0.0.1",
            "PGPORT": str(parts.port or 5432),
            "PGUSER": parts.username or ROLE,
            "PGPASSWORD": self.password,
            "PGDATABASE": parts.path.lstrip("/"),
        }


def seconds(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def wait_for(what: str, ready: Callable[[], bool], timeout: float, every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))]


def make_source(admin_url: str) -> Source:
    """A login role with REPLICATION and a database it owns (so it may publish its tables)."""
    password = secrets.token_urlsafe(16)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        (level,) = conn.execute("SHOW wal_level").fetchone()  # type: ignore[misc]
        assert level == "logical", level
        role = sql.SQL("CREATE ROLE {} LOGIN REPLICATION PASSWORD {}")
        conn.execute(role.format(sql.Identifier(ROLE), sql.Literal(password)))
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(*map(sql.Identifier, (DATABASE, ROLE)))
        )
    base = admin_url.rsplit("/", 1)[0]
    host_port = base.rsplit("@", 1)[1]
    return Source(f"{base}/{DATABASE}", f"postgresql://{ROLE}@{host_port}/{DATABASE}", password)


def create_connector(
    services: Services, source: Source, name: str, tables: list[str], **options: Any
) -> None:
    """A mode ``sync`` connector, the default body plus ``options`` in ``sync``; fails if
    kyma disabled it."""
    answer = services.connectors.create(
        {
            "name": name,
            "type": "postgres",
            "mode": "sync",
            "connection": {
                "url": source.url,
                "secret_ref": f"$env:{SECRET_ENV}",
                "tls": "disabled",
                "allow_insecure": True,
            },
            "sync": {"tables": tables, **options},
        }
    )
    assert answer["disabled_reason"] is None, answer


def make_worker(services: Services, name: str) -> CdcWorker:
    """The worker ``kyma serve`` runs for connector ``name`` (with the SparkTarget ``kyma
    serve`` passes to SyncRunner), so tables past ``sync.spark_min_bytes`` snapshot on Spark."""
    return CdcWorker(
        services.catalog.get_connector(name),
        services.connectors.connector(name),  # type: ignore[arg-type]
        services.catalog,
        services.write_path,
        lambda q: services.query.execute(q).table,
        spark=SparkTarget(
            services.jobs.store, services.settings.block_rows, services.settings.spark_master
        ),
    )


def kyma_rows(services: Services, text: str) -> list[dict[str, Any]]:
    return services.query.execute(text).table.to_pylist()


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


def bench_snapshot(
    services: Services, source: Source, rows: int, repeat: int, options: dict[str, Any]
) -> tuple[dict, CdcWorker]:
    nbytes = copy_binary(source)  # warm-up (and the page cache)
    peer_s = statistics.median(seconds(lambda: copy_binary(source)) for _ in range(repeat))
    create_connector(services, source, "snap", ["public.items"], **options)
    worker = make_worker(services, "snap")
    try:
        kyma_s = seconds(worker.start)
        (got,) = kyma_rows(services, "SELECT count(*) AS n FROM snap.public.items")
        assert got["n"] == rows, f"kyma holds {got['n']} rows of {rows}"
    except BaseException:
        worker.close()
        raise
    result = {
        "rows": rows,
        "sync_options": options,
        "spark_available": services.jobs.spark_available(),
        "peer_copy_bytes": nbytes,
        "peer_s": peer_s,
        "peer_rows_per_s": rows / peer_s,
        "kyma_s": kyma_s,
        "kyma_rows_per_s": rows / kyma_s,
        "ratio": peer_s / kyma_s,
    }
    print(
        f"snapshot: COPY binary {rows / peer_s:,.0f} rows/s ({peer_s:.2f} s, median of {repeat});"
        f" kyma start() {rows / kyma_s:,.0f} rows/s ({kyma_s:.2f} s)"
    )
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
        get = (
            f"SELECT count(*) FROM pg_logical_slot_get_binary_changes('{BENCH_SLOT}', NULL, NULL,"
            f" 'proto_version', '1', 'publication_names', '{publication}')"
        )
        messages = 0

        def peer() -> None:
            nonlocal messages
            ((messages,),) = source.execute(get)

        peer_s = seconds(peer)
        applied = 0

        def kyma() -> None:
            nonlocal applied
            applied = drain(worker, timeout)

        kyma_s = seconds(kyma)
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
    return {
        "changes": changes,
        "transactions": transactions,
        "peer_messages": messages,
        "peer_s": peer_s,
        "peer_changes_per_s": changes / peer_s,
        "kyma_s": kyma_s,
        "kyma_changes_per_s": changes / kyma_s,
        "ratio": peer_s / kyma_s,
    }


# ---------------------------------------------------------------- 3. lag


class Prober:
    """Commits a probe row every ``every`` seconds, and polls kyma for the rows it shows."""

    def __init__(self, services: Services, source: Source, every: float, poll: float) -> None:
        self.services, self.source, self.every, self.poll = services, source, every, poll
        self.sent = 0
        self.latencies: list[float] = []
        self.poll_s: list[float] = []
        self.errors: list[str] = []
        self.stop_sending = threading.Event()
        self.stop_polling = threading.Event()
        self.threads = [
            threading.Thread(target=self._guard(self._send), name="probe-send", daemon=True),
            threading.Thread(target=self._guard(self._watch), name="probe-poll", daemon=True),
        ]

    def _guard(self, body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except Exception as e:  # reported by the main thread
                self.errors.append(f"{type(e).__name__}: {e}")

        return run

    def _send(self) -> None:
        with self.source.connect() as conn:
            tick = time.monotonic()
            while not self.stop_sending.is_set():
                conn.execute("INSERT INTO probe (sent_at) VALUES (clock_timestamp())")
                self.sent += 1
                tick += self.every
                self.stop_sending.wait(max(0.0, tick - time.monotonic()))

    def _watch(self) -> None:
        last = 0
        while not self.stop_polling.is_set():
            started = time.perf_counter()
            rows = kyma_rows(
                self.services, f"SELECT id, sent_at FROM lag.public.probe WHERE id > {last}"
            )
            seen = time.time()
            self.poll_s.append(time.perf_counter() - started)
            for row in sorted(rows, key=lambda r: r["id"]):
                self.latencies.append(seen - row["sent_at"].timestamp())
                last = max(last, row["id"])
            self.stop_polling.wait(self.poll)

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self, timeout: float) -> None:
        self.stop_sending.set()
        self.threads[0].join(timeout)
        with contextlib.suppress(TimeoutError):
            wait_for("the last probes in kyma", lambda: len(self.latencies) >= self.sent, timeout)
        self.stop_polling.set()
        self.threads[1].join(timeout)


def pgbench(source: Source, *args: str, timeout: float) -> str:
    binary = find_pg_bin_dir() / "pgbench"
    done = subprocess.run(
        [str(binary), *args],
        env=source.libpq_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"pgbench {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def bench_lag(
    services: Services,
    source: Source,
    stack: contextlib.ExitStack,
    args: argparse.Namespace,
) -> dict:
    pgbench(source, "-i", "-s", "1", "-q", timeout=600)
    source.execute(
        "ALTER TABLE pgbench_history ADD COLUMN hid bigserial PRIMARY KEY;"
        " CREATE TABLE probe (id serial PRIMARY KEY, sent_at timestamptz NOT NULL)"
    )
    tables = [f"public.{t}" for t in [*PGBENCH_TABLES, "probe"]]
    create_connector(services, source, "lag", tables)
    worker = make_worker(services, "lag")
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), name="cdc-lag", daemon=True)
    thread.start()

    def stop_worker() -> None:
        stop.set()
        thread.join(timeout=60)

    stack.callback(stop_worker)

    def streaming() -> bool:
        assert worker.state != "disabled", worker.last_error
        return worker.state == "streaming" and worker.caught_up_at is not None

    wait_for("the lag connector's snapshot", streaming, timeout=args.timeout)
    prober = Prober(services, source, args.probe_ms / 1000, args.poll_ms / 1000)
    prober.start()
    stack.callback(prober.stop, 0)
    run = [
        "-n", "-R", str(args.rate), "-T", str(args.lag_seconds),
        "-c", str(args.clients), "-j", str(args.clients),
    ]  # fmt: skip
    try:
        report = pgbench(source, *run, timeout=args.lag_seconds + 120)
    finally:
        prober.stop(timeout=60)
    assert not prober.errors, prober.errors
    assert prober.latencies, "no probe reached kyma"
    # Every pgbench transaction reached kyma too.
    count = "SELECT count(*) AS n FROM {}"
    ((history,),) = source.execute(count.format("pgbench_history"))
    wait_for(
        "pgbench_history in kyma",
        lambda: kyma_rows(services, count.format("lag.public.pgbench_history"))[0]["n"] == history,
        timeout=60,
        every=0.5,
    )
    tps = re.search(r"tps = ([\d.]+)", report)
    latency = re.search(r"latency average = ([\d.]+) ms", report)
    ms = [x * 1000 for x in prober.latencies]
    result = {
        "seconds": args.lag_seconds,
        "pgbench_rate": args.rate,
        "pgbench_clients": args.clients,
        "pgbench_tps": float(tps.group(1)) if tps else None,
        "pgbench_latency_ms": float(latency.group(1)) if latency else None,
        "pgbench_transactions": history,
        "probes_sent": prober.sent,
        "probes_seen": len(ms),
        "probe_ms": args.probe_ms,
        "poll_ms": args.poll_ms,
        "poll_query_ms_p50": statistics.median(prober.poll_s) * 1000,
        "worker_poll_ms": worker.poll_seconds * 1000,
        "lag_ms_p50": percentile(ms, 50),
        "lag_ms_p99": percentile(ms, 99),
        "lag_ms_max": max(ms),
    }
    print(
        f"lag: {len(ms)} probes under pgbench at {result['pgbench_tps'] or 0:.1f} tps:"
        f" p50 {result['lag_ms_p50']:.0f} ms, p99 {result['lag_ms_p99']:.0f} ms"
    )
    return result


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
        f"| {'streaming changes/s (peer: slot get_changes)':<44}"
        f" | {stream['kyma_changes_per_s']:>14,.0f} | {stream['peer_changes_per_s']:>14,.0f}"
        f" | {stream['ratio']:>10.2f}x |"
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
    parser.add_argument("--json", default="-", help="file for the results ('-': stdout)")
    args = parser.parse_args()
    options = {k: json.loads(v) for k, _, v in (o.partition("=") for o in args.sync)}
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("kyma.connectors").setLevel(logging.ERROR)  # "TLS is disabled", per create
    print(
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores; rows={args.rows:,}"
        f" changes={args.changes:,}; source and catalog Postgres on loopback, TLS off"
    )
    results: dict[str, Any] = {
        "bench": "cdc",
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores",
        "args": vars(args),
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
            results["snapshot"], worker = bench_snapshot(
                services, source, args.rows, args.repeat, options
            )
            results["snapshot"]["table_bytes"] = table_bytes
            stack.callback(worker.close)
            results["streaming"] = bench_streaming(
                services, source, worker, args.rows, args.changes, args.transactions, args.timeout
            )
            worker.close()
            results["lag"] = (
                bench_lag(services, source, stack, args) if args.lag_seconds > 0 else None
            )
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(results)
    text = json.dumps(results, indent=2, default=str)
    if args.json == "-":
        print(text)
    else:
        Path(args.json).write_text(text + "\n")
        print(f"results written to {args.json}")


if __name__ == "__main__":
    sys.exit(main())
