"""The Postgres catalog: DDL, CAS commits, time travel, payload atomicity, ledger, GC."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pyarrow as pa
import pytest

from kyma.engine.catalog import Catalog, PostgresCatalog
from kyma.engine.errors import (
    AlreadyExistsError,
    NotFoundError,
    SchemaError,
    StaleCommitError,
)
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.choice import segment_format
from kyma.engine.gc import collect_orphans
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import Column, KymaType


def extent(n: int = 1, rows: int = 10) -> ExtentWriteResult:
    import uuid

    extent_id = str(uuid.uuid4())
    return ExtentWriteResult(
        extent_id=extent_id,
        object_path=f"tables/x/{extent_id}.tlm",
        byte_size=100 * n,
        row_count=rows,
        block_count=1,
        min_timestamp_nanos=n,
        max_timestamp_nanos=n + 5,
        present_paths=["props/a"],
        column_stats={"s": {"distinct": ["a"], "tokens": ["a"]}},
    )


def test_create_describe_widen_drop(catalog: Catalog) -> None:
    info = catalog.create_table(
        "logs", [Column("service", KymaType("string")), Column("v", KymaType("vector(3)"))]
    )
    assert [(c.name, c.type.name) for c in info.columns] == [
        ("_timestamp", "timestamp"),
        ("props", "dynamic"),
        ("service", "string"),
        ("v", "vector(3)"),
    ]
    assert info.current_snapshot_id is None
    assert info.schema.field("v").type == pa.list_(pa.float32(), 3)
    widened = catalog.add_column("logs", Column("duration", KymaType("long")))
    assert widened.columns[-1].name == "duration"
    assert catalog.add_column("logs", Column("duration", KymaType("long")), if_not_exists=True)
    with pytest.raises(AlreadyExistsError, match="'duration' already exists"):
        catalog.add_column("logs", Column("duration", KymaType("string")), if_not_exists=True)
    with pytest.raises(AlreadyExistsError):
        catalog.create_table("logs", [])
    assert catalog.create_table("logs", [], if_not_exists=True).table_id == info.table_id
    assert [t.name for t in catalog.list_tables()] == ["logs"]
    assert catalog.drop_table("logs")
    assert not catalog.drop_table("logs", if_exists=True)
    with pytest.raises(NotFoundError, match="'logs' does not exist"):
        catalog.get_table("logs")


@pytest.mark.parametrize(
    ("name", "columns", "message"),
    [
        ("bad name", [], "invalid table name"),
        ("x; DROP TABLE kyma.tables", [], "invalid table name"),
        ("ok", [Column("props", KymaType("string"))], "default column"),
        ("ok", [Column("a", KymaType("long")), Column("a", KymaType("long"))], "appears twice"),
        ("ok", [Column("1a", KymaType("long"))], "invalid column name"),
    ],
)
def test_bad_definitions_are_refused(catalog: Catalog, name, columns, message) -> None:
    with pytest.raises(SchemaError, match=message):
        catalog.create_table(name, columns)
    assert catalog.list_tables() == []


def test_commits_chain_snapshots_and_support_time_travel(catalog: Catalog) -> None:
    catalog.create_table("logs", [])
    a, b, c = extent(1), extent(2), extent(3)
    s1 = catalog.commit("logs", [a])
    s2 = catalog.commit("logs", [b, c])
    s3 = catalog.commit("logs", [], removed=[a.extent_id, b.extent_id])
    assert s1.parent_id is None and s2.parent_id == s1.snapshot_id
    assert s3.parent_id == s2.snapshot_id
    ids = lambda snap: {e.extent_id for e in catalog.live_extents("logs", snap)}  # noqa: E731
    assert ids(s1.snapshot_id) == {a.extent_id}
    assert ids(s2.snapshot_id) == {a.extent_id, b.extent_id, c.extent_id}
    assert ids(None) == ids(s3.snapshot_id) == {c.extent_id}
    entry = catalog.live_extents("logs")[0]
    assert (entry.min_ts, entry.max_ts, entry.present_paths) == (3, 8, ["props/a"])
    assert entry.column_stats == {"s": {"distinct": ["a"], "tokens": ["a"]}}
    snapshots = catalog.snapshots("logs")
    assert [s.summary["added_rows"] for s in snapshots] == [10, 20, 0]
    with pytest.raises(NotFoundError, match="no snapshot 999999"):
        catalog.live_extents("logs", 999999)


def test_removing_an_extent_twice_is_refused(catalog: Catalog) -> None:
    catalog.create_table("logs", [])
    a = extent()
    catalog.commit("logs", [a])
    catalog.commit("logs", [extent()], removed=[a.extent_id])
    with pytest.raises(StaleCommitError, match="no longer live"):
        catalog.commit("logs", [extent()], removed=[a.extent_id])
    assert len(catalog.snapshots("logs")) == 2


def test_payload_commits_with_the_snapshot_or_not_at_all(catalog: Catalog) -> None:
    catalog.create_table("logs", [])

    def ledger(cur: psycopg.Cursor, snapshot_id: int) -> None:
        cur.execute(
            "INSERT INTO kyma.ingest_ledger (key, table_name, ack) VALUES ('k1', 'logs', %s)",
            (psycopg.types.json.Jsonb({"snapshot_id": snapshot_id}),),
        )

    result = catalog.commit("logs", [extent()], payload=ledger)
    with pytest.raises(psycopg.errors.UniqueViolation):
        catalog.commit("logs", [extent()], payload=ledger)
    assert catalog.get_table("logs").current_snapshot_id == result.snapshot_id
    assert len(catalog.live_extents("logs")) == 1
    with psycopg.connect(catalog.url) as conn:
        (ack,) = conn.execute("SELECT ack FROM kyma.ingest_ledger WHERE key = 'k1'").fetchone()
    assert ack == {"snapshot_id": result.snapshot_id}


def _writer_process(url: str, commits: int, start: object, results: object) -> None:
    catalog = PostgresCatalog.connect(url, pool_size=1)
    start.wait(timeout=120)  # type: ignore[attr-defined]  # all writers race from here
    retries = 0
    for _ in range(commits):
        retries += catalog.commit("logs", [extent()]).attempts - 1
    catalog.close()
    results.put(retries)  # type: ignore[attr-defined]


def test_concurrent_writers_lose_nothing(catalog: Catalog) -> None:
    catalog.create_table("logs", [])
    writers, commits = 8, 15
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(writers), ctx.Queue()
    procs = [
        ctx.Process(target=_writer_process, args=(catalog.url, commits, start, results))
        for _ in range(writers)
    ]
    for proc in procs:
        proc.start()
    retries = [results.get(timeout=180) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert len(catalog.live_extents("logs")) == writers * commits
    chain = catalog.snapshots("logs")
    assert len(chain) == writers * commits
    assert [s.parent_id for s in chain[1:]] == [s.snapshot_id for s in chain[:-1]]
    assert sum(retries) > 0, "8 writers never collided: the CAS path was not exercised"


def test_a_commit_waiting_on_the_head_has_inserted_no_manifest_rows(catalog: Catalog) -> None:
    """The swap of the head comes before the manifest rows: a commit that will lose the race
    (or wait for the head's lock) has not yet done the costly part."""
    catalog.create_table("logs", [])
    with psycopg.connect(catalog.url) as holder, psycopg.connect(catalog.url) as watch:
        holder.execute(  # what a concurrent commit's swap holds until it commits
            "SELECT 1 FROM kyma.tables WHERE name = 'logs' FOR NO KEY UPDATE"
        )
        done: list[int] = []
        committing = threading.Thread(
            target=lambda: done.append(catalog.commit("logs", [extent()]).attempts)
        )
        committing.start()
        waiting = None
        for _ in range(200):  # up to 10 s for the commit to block on the head
            waiting = watch.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> %s",
                (holder.info.backend_pid,),
            ).fetchone()
            if waiting is not None:
                break
            time.sleep(0.05)
        assert waiting is not None, "the commit never waited on the head's lock"
        (manifest_locks,) = watch.execute(
            "SELECT count(*) FROM pg_locks WHERE pid = %s AND relation = 'kyma.manifest'::regclass",
            waiting,
        ).fetchone()
        holder.rollback()
        committing.join(timeout=30)
    assert manifest_locks == 0
    assert done == [1]  # the head did not move: the swap succeeded once unblocked
    assert len(catalog.live_extents("logs")) == 1


def _write(store: LocalStore, prefix: str) -> ExtentWriteResult:
    writer = segment_format().start_extent(store, pa.schema([("n", pa.int64())]), prefix)
    writer.append(pa.record_batch({"n": [1, 2]}))
    return writer.finish()


def test_orphan_gc_removes_only_old_unreferenced_objects(catalog: Catalog, tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    info = catalog.create_table("logs", [])
    kept = _write(store, info.path_prefix)
    retired = _write(store, info.path_prefix)
    orphan = _write(store, info.path_prefix)
    fresh_orphan = _write(store, info.path_prefix)
    catalog.commit("logs", [kept, retired])
    catalog.commit("logs", [], removed=[retired.extent_id])
    old = 10_000
    for result in (kept, retired, orphan):
        path = store.root / result.object_path
        os.utime(path, (path.stat().st_atime - old, path.stat().st_mtime - old))
    deleted = collect_orphans(catalog, store, grace=timedelta(hours=1))
    assert deleted == [orphan.object_path]
    remaining = {o.key for o in store.list("tables/")}
    assert remaining == {kept.object_path, retired.object_path, fresh_orphan.object_path}
    catalog.drop_table("logs")
    deleted = collect_orphans(catalog, store, grace=timedelta(hours=1))
    assert sorted(deleted) == sorted([kept.object_path, retired.object_path])
