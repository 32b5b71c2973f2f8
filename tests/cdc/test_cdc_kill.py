"""kill -9 of ``kyma cdc-sync`` at random points while pgbench writes: after a final run the
synced tables equal the source, and no change landed twice."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cdc_helpers import body, cdc_sync_process, kyma

PGBENCH = Path("/usr/lib/postgresql/15/bin/pgbench")
TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]


def _pgbench(cdc_source, *args: str) -> subprocess.Popen:  # type: ignore[no-untyped-def]
    if not PGBENCH.exists():
        pytest.fail(f"{PGBENCH} is missing: apt-get install postgresql-15")
    env = {**os.environ, "PGPASSWORD": cdc_source.password}
    return subprocess.Popen(
        [str(PGBENCH), *args, cdc_source.url],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _source_totals(cdc_source) -> dict:  # type: ignore[no-untyped-def]
    return {
        t: cdc_source.execute(f"SELECT count(*), coalesce(sum({_amount(t)}), 0) FROM {t}")[0]
        for t in TABLES
    }


def _kyma_totals(services) -> dict:  # type: ignore[no-untyped-def]
    totals = {}
    for t in TABLES:
        row = kyma(services, f"SELECT count(*) AS n, sum({_amount(t)}) AS s FROM pg.public.{t}")
        n, s = row.to_pylist()[0].values()
        totals[t] = (n, s or 0)
    return totals


def _amount(table: str) -> str:
    return {"pgbench_history": "delta"}.get(table, table.split("_")[1][0] + "balance")


def test_kill_9_during_pgbench_loses_and_duplicates_nothing(
    services, cdc_source, tmp_path: Path
) -> None:
    seed = int(os.environ.get("KYMA_TEST_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    init = _pgbench(cdc_source, "-i", "-s", "1", "-q")
    _, errors = init.communicate(timeout=120)
    assert init.returncode == 0, errors
    cdc_source.execute("ALTER TABLE pgbench_history ADD COLUMN hid bigserial PRIMARY KEY")
    services.connectors.create(body(cdc_source, [f"public.{t}" for t in TABLES]))
    catalog_url = services.catalog.url
    log = tmp_path / "cdc-sync.log"
    bench = _pgbench(cdc_source, "-c", "4", "-T", "10", "-n")
    kills = 0
    try:
        while bench.poll() is None:
            proc = cdc_sync_process(catalog_url, tmp_path / "objects", log)
            time.sleep(rng.uniform(0.8, 3.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            kills += 1
    finally:
        if bench.poll() is None:
            bench.kill()
        _, errors = bench.communicate(timeout=30)
    assert bench.returncode == 0, errors
    proc = cdc_sync_process(catalog_url, tmp_path / "objects", log)
    try:
        expected = _source_totals(cdc_source)
        deadline = time.monotonic() + 90
        got = None
        while time.monotonic() < deadline:
            got = _kyma_totals(services)
            if got == expected:
                break
            time.sleep(0.5)
        assert got == expected, f"seed {seed}, {kills} kills:\n{log.read_text()[-3000:]}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for t in ("pgbench_branches", "pgbench_tellers"):
        for a, b in (
            (f"pg.public.{t}", f"live(pg.public.{t})"),
            (f"live(pg.public.{t})", f"pg.public.{t}"),
        ):
            assert kyma(services, f"SELECT * FROM {a} EXCEPT SELECT * FROM {b}").num_rows == 0
    for t in TABLES:
        dupes = kyma(
            services,
            f"SELECT _kyma_pk, _kyma_lsn FROM pg.public.{t}__changes"
            " GROUP BY 1, 2 HAVING count(*) > 1",
        )
        assert dupes.num_rows == 0, (t, seed)
    assert kills >= 2
