"""Steady-state lag of CDC sync: commit on the source → visible in a kyma query, while
pgbench runs at a fixed rate."""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import subprocess
import threading
import time
from collections.abc import Callable

from _cdc_source import Source, create_connector, kyma_rows, make_worker
from _harness import percentile, wait_for

from kyma.runtime.postgres import find_pg_bin_dir
from kyma.services import Services

PGBENCH_TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]


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
