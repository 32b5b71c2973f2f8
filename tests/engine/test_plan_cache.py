"""The plan cache: a repeated statement text skips parsing and planning, and still answers
from the catalog's current tables; authorization runs for every statement."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kyma.engine.errors import NotFoundError, PermissionDeniedError
from kyma.engine.query import READ, Access

SUM = "SELECT count(*) AS n, sum(v) AS total FROM t WHERE v > 0"


def _ingest(services, values: list[int]) -> None:
    batch = pa.record_batch({"v": pa.array(values, pa.int64())})
    services.write_path.ingest_batches("t", [batch], source="test")


def _plan(services, sql: str):  # type: ignore[no-untyped-def]
    return services.query.planner._plans.get((sql, True, True))


@pytest.fixture
def table(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (v long)")
    _ingest(services, [1, 2, 3])
    return services


def test_a_repeated_statement_reuses_its_plan(table) -> None:
    first = table.query.execute(SUM)
    plan = _plan(table, SUM)
    assert plan is not None
    second = table.query.execute(SUM)
    assert _plan(table, SUM) is plan
    assert second.table.to_pylist() == first.table.to_pylist() == [{"n": 3, "total": 6}]
    assert second.stats["rows_scanned"] == first.stats["rows_scanned"] == 3


def test_a_new_snapshot_is_read_and_replans(table) -> None:
    table.query.execute(SUM)
    plan = _plan(table, SUM)
    _ingest(table, [10, -5])
    answer = table.query.execute(SUM)
    assert answer.table.to_pylist() == [{"n": 4, "total": 16}]
    assert answer.stats["rows_scanned"] == 5
    assert _plan(table, SUM) is not plan


def test_a_new_column_shows_in_a_repeated_star(table) -> None:
    star = "SELECT * FROM t ORDER BY v"
    assert table.query.execute(star).table.column_names == ["_timestamp", "props", "v"]
    table.query.execute("ALTER TABLE t ADD COLUMN w string")
    answer = table.query.execute(star)
    assert answer.table.column_names == ["_timestamp", "props", "v", "w"]
    assert answer.table.column("w").to_pylist() == [None, None, None]


def test_a_recreated_table_is_planned_again(table) -> None:
    sql = "SELECT v FROM t ORDER BY v"
    assert table.query.execute(sql).table.column("v").to_pylist() == [1, 2, 3]
    table.query.execute("DROP TABLE t")
    with pytest.raises(NotFoundError, match="table 't' does not exist"):
        table.query.execute(sql)
    table.query.execute("CREATE TABLE t (v string)")
    table.write_path.ingest_batches("t", [pa.record_batch({"v": ["x"]})], source="test")
    assert table.query.execute(sql).table.column("v").to_pylist() == ["x"]


def test_every_caller_is_authorized_even_for_a_kept_plan(table) -> None:
    table.query.execute("CREATE TABLE other (v long)")
    seen: list[Access] = []

    def reads(allowed: set[str]):  # type: ignore[no-untyped-def]
        def authorize(needs: Access) -> None:
            seen.append(needs)
            if needs.scope != READ or not (needs.tables or set()) <= allowed:
                raise PermissionDeniedError(f"may not read {sorted(needs.tables or [])}")

        return authorize

    assert table.query.execute(SUM, authorize=reads({"t"})).table.num_rows == 1
    assert _plan(table, SUM) is not None
    with pytest.raises(PermissionDeniedError, match=r"may not read \['t'\]"):
        table.query.execute(SUM, authorize=reads({"other"}))
    assert seen == [Access(READ, frozenset({"t"}))] * 2


def test_switches_and_time_travel_are_planned_apart(table) -> None:
    snapshot = table.catalog.get_table("t").current_snapshot_id
    _ingest(table, [100])
    assert table.query.execute(SUM).table.to_pylist() == [{"n": 4, "total": 106}]
    unpruned = table.query.execute(SUM, pruning=False)
    assert unpruned.table.to_pylist() == [{"n": 4, "total": 106}]
    old = table.query.execute(SUM, snapshot=snapshot)
    assert old.table.to_pylist() == [{"n": 3, "total": 6}]
    assert table.query.execute(SUM).table.to_pylist() == [{"n": 4, "total": 106}]


def test_the_catalog_reads_a_querys_tables_together(table) -> None:
    table.query.execute("CREATE TABLE other (s string, d dynamic)")
    table.query.execute("ALTER TABLE other ADD COLUMN later long")
    found = table.catalog.get_tables(["t", "other", "missing", "bad\x00name"])
    assert sorted(found) == ["other", "t"]
    for name in found:
        assert found[name] == table.catalog.get_table(name)
    assert [c.name for c in found["other"].columns][-1] == "later"
    assert table.catalog.get_tables([]) == {}


def test_a_refused_statement_is_not_kept(table) -> None:
    def refuse(needs: Access) -> None:
        raise PermissionDeniedError("may not read")

    refused = "SELECT sum(v) AS total FROM t WHERE v > 1"
    with pytest.raises(PermissionDeniedError):
        table.query.execute(refused, authorize=refuse)
    assert table.query._parsed.get(refused) is None
    assert _plan(table, refused) is None


def test_a_long_statement_is_planned_anew_each_time(table) -> None:
    padding = " ".join(f"/* {n:06d} */" for n in range(1_500))  # a long text, a short tree
    long = f"{SUM} {padding}"
    assert len(long) > 16 * 1024
    assert table.query.execute(long).table.to_pylist() == [{"n": 3, "total": 6}]
    assert table.query._parsed.get(long) is None
    assert _plan(table, long) is None
