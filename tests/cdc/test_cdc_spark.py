"""Snapshots of large tables on Spark (``local[2]``): page-range chunks read under the
exported snapshot, one commit; a kill -9 in the middle resumes with the chunks not read."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from cdc_helpers import body, cdc_sync_process, drain, kyma

from kyma.connectors.postgres.cdc import SparkTarget
from kyma.connectors.postgres.cdc._spark_snapshot import page_ranges

BIG = """
CREATE TABLE big (id int PRIMARY KEY, grp int NOT NULL, amount numeric(12,2), pad text);
INSERT INTO big SELECT g, g % 7, g * 0.25, repeat(md5(g::text), 4) FROM generate_series(1, {n}) g;
"""


def _connector(services, cdc_source, rows: int, chunk_bytes: int) -> int:  # type: ignore[no-untyped-def]
    cdc_source.execute(BIG.format(n=rows))
    spec = body(cdc_source, ["public.big"], mode="both")
    spec["sync"].update(spark_min_bytes=1, chunk_bytes=chunk_bytes)
    return services.connectors.create(spec)["id"]


def test_chunks_are_equal_and_fill_every_wave_of_tasks() -> None:
    for pages, most, slots in [(46_720, 8_192, 2), (19_000, 8_192, 2), (10, 4, 3), (3, 4, 8)]:
        chunks = page_ranges(pages, most, slots)
        count = len(chunks)
        assert count % slots == 0 or count == pages  # a wave never runs a lone remainder
        bounds = [(c.first_page, c.end_page or pages) for c in chunks]
        assert bounds[0][0] == 0 and chunks[-1].end_page is None
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))  # no gap
        sizes = [end - first for first, end in bounds]
        assert max(sizes) <= most and max(sizes) - min(sizes) <= 1
    assert len(page_ranges(46_720, 8_192, 2)) == 6  # 5.7 chunks of 64 MiB: 6 of 58 MiB
    assert len(page_ranges(19_000, 8_192, 2)) == 4  # not 3, the third alone in a wave


def test_a_chunk_task_does_not_import_the_streaming_loop() -> None:
    """Every fresh Spark Python worker imports what the chunk task needs (~1 s of CPU):
    not the streaming loop and DataFusion."""
    probe = (
        "import sys, kyma.connectors.postgres.cdc._spark_snapshot;"
        "print(sorted({'datafusion', 'kyma.connectors.postgres.cdc._worker'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def _totals(services) -> tuple:  # type: ignore[no-untyped-def]
    row = kyma(services, "SELECT count(*) AS n, sum(amount) AS s, sum(grp) AS g FROM pg.public.big")
    return tuple(row.to_pylist()[0].values())


def _source_totals(cdc_source) -> tuple:  # type: ignore[no-untyped-def]
    n, s, g = cdc_source.execute("SELECT count(*), sum(amount), sum(grp) FROM big")[0]
    return n, float(s), g


def _write_meanwhile(cdc_source, stop: threading.Event) -> threading.Thread:  # type: ignore[no-untyped-def]
    """Updates, deletes and inserts all over the table until ``stop``."""

    def run() -> None:
        i = 0
        while not stop.is_set() and i < 300:
            i += 1
            cdc_source.execute(
                "UPDATE big SET amount = amount + 1, grp = grp + 1 WHERE id %% 97 = %s", (i % 97,)
            )
            cdc_source.execute("DELETE FROM big WHERE id = %s", (i * 13,))
            cdc_source.execute("INSERT INTO big VALUES (%s, 1, 1.5, 'new')", (1_000_000 + i,))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_large_table_snapshots_on_spark_exactly(services, cdc_source, worker, spark) -> None:
    connector_id = _connector(services, cdc_source, rows=20_000, chunk_bytes=128 * 1024)
    w = worker("pg", spark=SparkTarget(services.jobs.store))
    stop = threading.Event()
    writes = _write_meanwhile(cdc_source, stop)
    try:
        w.start()
    finally:
        stop.set()
        writes.join(timeout=60)
    drain(w, timeout=120)
    assert _totals(services) == _source_totals(cdc_source)
    for a, b in (
        ("pg.public.big", "live(pg.public.big)"),
        ("live(pg.public.big)", "pg.public.big"),
    ):
        assert kyma(services, f"SELECT * FROM {a} EXCEPT SELECT * FROM {b}").num_rows == 0
    extents = services.catalog.live_extents("pg__public__big")
    first = min(e.added_snapshot_id for e in extents)  # the snapshot's one commit
    assert len([e for e in extents if e.added_snapshot_id == first]) >= 10  # one per chunk
    assert services.stores.cdc.chunks(connector_id, "public.big") == []  # records retired
    assert services.connectors.status("pg")["sync"]["rows_snapshotted"] > 19_000


def _chunks_done(services, connector_id: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    chunks = services.stores.cdc.chunks(connector_id, "public.big")
    return sum(c.done for c in chunks), len(chunks)


def test_kill_9_in_a_spark_snapshot_resumes_chunk_by_chunk(
    services, cdc_source, tmp_path: Path
) -> None:
    connector_id = _connector(services, cdc_source, rows=30_000, chunk_bytes=256 * 1024)
    log = tmp_path / "cdc-sync.log"
    proc = cdc_sync_process(
        services.catalog.url, tmp_path / "objects", log, KYMA_SPARK_MASTER="local[2]"
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done, total = _chunks_done(services, connector_id)
            if done >= 3:
                (table,) = services.connectors.status("pg")["sync"]["tables"]
                progress = table["snapshot_chunks"]  # status shows the snapshot's progress
                assert progress["total"] == total and progress["done"] >= 3
                assert progress["rows_read"] > 0
                break
            time.sleep(0.05)
        assert 3 <= done < total, (done, total, log.read_text()[-2000:])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    done, total = _chunks_done(services, connector_id)
    assert done < total  # the kill landed mid-snapshot
    cdc_source.execute("UPDATE big SET amount = 0 WHERE id % 10 = 0")  # between the runs
    cdc_source.execute("DELETE FROM big WHERE id % 10 = 1")
    proc = cdc_sync_process(
        services.catalog.url, tmp_path / "objects", log, KYMA_SPARK_MASTER="local[2]"
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            streaming = services.connectors.status("pg")["sync"]["phase"] == "streaming"
            if streaming and _totals(services) == _source_totals(cdc_source):
                break
            time.sleep(0.5)
        assert _totals(services) == _source_totals(cdc_source), log.read_text()[-3000:]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    resumed = re.search(
        r"resumes: (\d+) of (\d+) chunks already read, (\d+) to read", log.read_text()
    )
    assert resumed is not None, log.read_text()[-3000:]
    already, planned, to_read = map(int, resumed.groups())
    # A Python worker may record the chunk it was writing just after the kill, so the
    # restart may find more than ``done``; it never reads a recorded chunk again.
    assert planned == total and done <= already < total and to_read == total - already
    twice = kyma(
        services,
        "SELECT _kyma_pk, _kyma_lsn FROM pg.public.big__changes GROUP BY 1, 2 HAVING count(*) > 1",
    )
    assert twice.num_rows == 0
