"""A catalog alone on its database trusts the tables it read until its own next write (no
catalog round trip per statement); another kyma opening on the same database first makes
it stop trusting, so a commit acknowledged by either is seen by the other's next statement."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest
from serve_helpers import Serve

from kyma.engine.catalog._presence import LEASE
from kyma.engine.types import Column, KymaType
from kyma.stores import Stores

POINT = "SELECT name FROM t WHERE id = 2"


def _ingest(services, ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    batch = pa.record_batch({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})
    services.write_path.ingest_batches("t", [batch], source="test")


def _count(services) -> int:  # type: ignore[no-untyped-def]
    return services.query.execute("SELECT count(id) AS n FROM t").table.column("n")[0].as_py()


def _sole(catalog) -> bool:  # type: ignore[no-untyped-def]
    return catalog._presence.token() is not None


def _until_sole(catalog) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + LEASE * 4
    while not _sole(catalog):
        assert time.monotonic() < deadline, "the catalog did not become sole again"
        time.sleep(0.05)


@pytest.fixture
def table(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (id long, name string)")
    _ingest(services, [1, 2, 3])
    return services


def test_a_sole_catalog_repeats_a_statement_without_asking_it(table) -> None:
    catalog = table.catalog
    assert _sole(catalog)
    assert table.query.execute(POINT).stats["catalog_reads"] == 1
    asked = catalog.version_reads
    for _ in range(3):
        answer = table.query.execute(POINT)
        assert answer.table.to_pylist() == [{"name": "n2"}]
        assert (answer.stats["catalog_reads"], answer.stats["plan"]) == (0, "shape")
    assert catalog.version_reads == asked


def test_its_own_commit_is_seen_by_the_next_statement(table) -> None:
    catalog = table.catalog
    assert _count(table) == 3
    asked = catalog.version_reads
    _ingest(table, [4, 5])
    assert _count(table) == 5  # the commit ended the trust: asked once, then trusted
    assert _count(table) == 5
    assert catalog.version_reads == asked + 1
    table.query.execute("ALTER TABLE t ADD COLUMN extra string")
    assert "extra" in table.query.execute("SELECT * FROM t").table.column_names


def test_another_catalog_opening_ends_the_trust_before_it_can_commit(table) -> None:
    first = table.catalog
    assert _count(table) == 3 and _sole(first)
    table.query.execute(POINT)
    assert table.query.execute(POINT).stats["catalog_reads"] == 0  # trusted
    second = Stores.open(first.url)
    try:
        assert not _sole(first) and not _sole(second.catalog)  # before it returned
        asked = first.version_reads
        assert _count(table) == 3
        assert first.version_reads == asked + 1  # not sole: every statement asks
        assert table.query.execute(POINT).stats["catalog_reads"] == 1  # asked again
        second.catalog.add_columns("t", [Column("late", KymaType.parse("string"))])
        assert "late" in table.query.execute("SELECT * FROM t").table.column_names
    finally:
        second.close()
    _until_sole(first)  # alone again: trusted again
    assert _count(table) == 3
    asked = first.version_reads
    assert _count(table) == 3
    assert first.version_reads == asked


def test_two_servers_see_each_others_commits_at_once(table, tmp_path) -> None:
    """A real ``kyma serve`` on the same catalog and object store as ``table``'s engine."""
    first = table.catalog
    assert _count(table) == 3 and _sole(first)
    objects = table.store.url
    serve = Serve(tmp_path / "other", KYMA_CATALOG_URL=first.url, KYMA_OBJECT_STORE=objects)
    try:
        assert not _sole(first)
        status, ack = serve.post("/v1/ingest/t", {"id": 7, "name": "n7"})
        assert status == 200 and ack["rows"] == 1, ack
        assert _count(table) == 4  # the other server's acknowledged commit, seen at once
        _ingest(table, [8])
        assert serve.sql("SELECT count(id) AS n FROM t")["rows"] == [[5]]
    finally:
        serve.stop()
    _until_sole(first)
    assert _count(table) == 5
