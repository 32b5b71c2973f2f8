"""Compaction: fewer, bigger extents; the same answers; nothing lost under concurrent ingest."""

from __future__ import annotations

import json
import threading
from functools import partial

from compaction_helpers import answers, ingest

from kyma.engine.compaction import compact_table, plan_groups


def test_small_extents_merge_and_answers_stay_the_same(services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    for i in range(12):
        ingest(services, i * 500, 500)
    before = answers(services)
    snapshot = services.catalog.get_table("t").current_snapshot_id
    result = compact_table(
        services.catalog, services.store, services.format, "t", target_rows=2_000
    )
    assert (result.groups, result.extents_in, result.extents_out, result.rows) == (3, 12, 3, 6000)
    assert len(services.catalog.live_extents("t")) == 3
    assert answers(services) == before
    old = services.query.execute(f"SELECT count(*) AS c FROM t AS OF SNAPSHOT {snapshot}")
    assert old.table.to_pylist() == [{"c": 6000}]  # time travel still reads the old extents
    again = compact_table(services.catalog, services.store, services.format, "t", target_rows=2_000)
    assert again.groups == 0  # nothing small is left


def test_groups_follow_time_order_and_skip_big_extents(services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    for start in (3000, 0, 1000, 2000):
        ingest(services, start, 500)
    ingest(services, 10_000, 3000)  # already big enough
    groups = plan_groups(services.catalog.live_extents("t"), target_rows=2_000)
    assert [[e.min_ts for e in g] for g in groups] == [
        [1_700_000_000_000_000_000 + s for s in (0, 1000, 2000, 3000)]
    ]


def test_concurrent_ingest_and_compactions_lose_and_duplicate_nothing(services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    batches, rows = 40, 100
    done = threading.Event()

    def writer() -> None:
        for i in range(batches):
            ingest(services, i * rows, rows)
        done.set()

    def compactor() -> None:
        while not done.is_set():
            compact_table(services.catalog, services.store, services.format, "t", target_rows=800)

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=compactor) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    compact_table(services.catalog, services.store, services.format, "t", target_rows=800)
    count = services.query.execute("SELECT count(*) AS c, count(DISTINCT n) AS d FROM t")
    assert count.table.to_pylist() == [{"c": batches * rows, "d": batches * rows}]
    assert len(services.catalog.live_extents("t")) < batches


def test_kyma_compact_on_the_command_line(services, tmp_path) -> None:
    import os
    import subprocess
    import sys

    services.query.execute("CREATE TABLE t (n long, host string)")
    for i in range(4):
        ingest(services, i * 100, 100)
    done = subprocess.run(
        [sys.executable, "-m", "kyma", "compact", "t"],
        env={
            **os.environ,
            "KYMA_HOME": str(tmp_path / "home"),
            "KYMA_CATALOG_URL": services.catalog.url,
            "KYMA_OBJECT_STORE": f"file://{tmp_path / 'objects'}",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "t: 4 extents -> 1 (400 rows" in done.stdout
    assert len(services.catalog.live_extents("t")) == 1


def test_tlm_and_parquet_extents_answer_together_and_compaction_rewrites_tlm(services) -> None:
    from kyma.engine.format.choice import segment_format
    from kyma.ingest.write_path import WritePath

    services.query.execute("CREATE TABLE t (n long, host string)")
    old = WritePath(
        services.catalog, services.stores.ledger, services.store, segment_format("tlm", 1024)
    )
    for start in (0, 1000):  # written before the upgrade
        body = "\n".join(
            json.dumps({"n": n, "host": f"h{n % 5}", "_timestamp": 1_700_000_000_000_000_000 + n})
            for n in range(start, start + 1000)
        )
        old.ingest_ndjson("t", body.encode())
    ingest(services, 2000, 3000)  # after it: Parquet, big enough to stay as it is
    extents = services.catalog.live_extents("t")
    assert sorted(e.format for e in extents) == ["parquet", "tlm", "tlm"]
    assert all(e.object_path.endswith(f".{e.format}") for e in extents)
    before = answers(services)
    assert before[1] == [
        {"host": f"h{h}", "c": 1000, "s": sum(range(h, 5000, 5))} for h in range(5)
    ]
    result = compact_table(
        services.catalog, services.store, services.format, "t", target_rows=4_000
    )
    assert (result.extents_in, result.extents_out, result.rows) == (2, 1, 2000)
    after = services.catalog.live_extents("t")
    assert sorted(e.format for e in after) == ["parquet", "parquet"]
    assert answers(services) == before
    history = services.catalog.snapshots("t")[-1].summary
    assert history["rewritten_formats"] == ["tlm"]
    again = compact_table(services.catalog, services.store, services.format, "t", target_rows=4_000)
    assert again.groups == 0


def test_a_big_tlm_extent_alone_is_rewritten(services) -> None:
    from kyma.engine.format.choice import segment_format
    from kyma.ingest.write_path import WritePath

    services.query.execute("CREATE TABLE t (n long, host string)")
    old = WritePath(
        services.catalog, services.stores.ledger, services.store, segment_format("tlm", 1024)
    )
    body = "\n".join(json.dumps({"n": n, "host": "h"}) for n in range(3000))
    old.ingest_ndjson("t", body.encode())
    assert plan_groups(services.catalog.live_extents("t"), 2_000) == []  # big enough
    (group,) = plan_groups(services.catalog.live_extents("t"), 2_000, "parquet")
    assert [e.format for e in group] == ["tlm"]
    compact_table(services.catalog, services.store, services.format, "t", target_rows=2_000)
    (extent,) = services.catalog.live_extents("t")
    assert (extent.format, extent.row_count) == ("parquet", 3000)
    got = services.query.execute("SELECT count(*) AS c, sum(n) AS s FROM t").table.to_pylist()
    assert got == [{"c": 3000, "s": sum(range(3000))}]


def test_tiered_groups_wait_until_they_grow_their_largest_extent_by_half(services) -> None:
    services.query.execute("CREATE TABLE t (n long, host string)")
    ingest(services, 0, 2000)
    ingest(services, 2000, 400)
    ingest(services, 2400, 400)  # 800 new rows grow the 2 000-row extent by 40 %: not yet
    extents = services.catalog.live_extents("t")
    assert len(plan_groups(extents, target_rows=10_000)) == 1
    assert plan_groups(extents, target_rows=10_000, tiered=True) == []
    assert services.compact("t", tiered=True).groups == 0
    ingest(services, 2800, 200)  # now 1 000: by half
    before = answers(services)
    result = services.compact("t", tiered=True)
    assert (result.groups, result.extents_in, result.rows) == (1, 4, 3000)
    assert len(services.catalog.live_extents("t")) == 1
    assert answers(services) == before


def test_the_background_compactor_merges_the_tables_that_got_rows(services) -> None:
    from kyma.compactor import Compactor

    services.query.execute("CREATE TABLE t (n long, host string)")
    services.query.execute("CREATE TABLE quiet (n long)")
    ingest(services, 0, 300)  # before the compactor listens: not heard of
    compactor = Compactor(partial(services.compact, tiered=True), interval=60)
    services.catalog.commit_listeners.append(compactor.observe)
    for i in range(1, 6):
        ingest(services, i * 300, 300)
    assert compactor.pending == 1
    before = answers(services)
    [result] = compactor.run_once()
    assert (result.table, result.extents_in, result.extents_out) == ("t", 6, 1)
    assert compactor.pending == 0  # its own commit is no new rows
    assert compactor.run_once() == []
    assert len(services.catalog.live_extents("t")) == 1
    assert answers(services) == before
    ingest(services, 10_000, 10)
    services.write_path.ingest_ndjson("quiet", b'{"n": 1}\n')
    services.query.execute("DROP TABLE t")  # dropped before its check: the others go on
    assert [r.table for r in compactor.run_once()] == ["quiet"]
    assert compactor.pending == 0
