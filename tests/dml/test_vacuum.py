"""VACUUM: after it no object in the store holds a deleted row (every object is read), the
current snapshot answers as before, time travel keeps what the snapshot setting keeps, and
a VACUUM killed (SIGKILL) at either crash point leaves an exact table that the next VACUUM
erases."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest

from kyma.engine.vacuum import vacuum_table


def setup(kyma, table: str) -> None:
    assert kyma.http(f"CREATE TABLE {table} (n long, who string)")[0] == 200
    for start in range(0, 300, 100):
        values = ", ".join(
            f"({i}, '{'erase-me-' if i % 7 == 0 else 'keep-'}{i}')"
            for i in range(start, start + 100)
        )
        assert kyma.http(f"INSERT INTO {table} (n, who) VALUES {values}")[0] == 200


def stored_values(kyma, table: str) -> set[str]:
    """Every value of column ``who`` in every object of the table's folder in the store
    (whatever the catalog references), each read as an extent."""
    store, fmt = kyma.services.store, kyma.services.format
    prefix = kyma.services.catalog.get_table(table).path_prefix + "/"
    found: set[str] = set()
    for obj in store.list(prefix):
        reader = fmt.open_extent(store, obj.key)
        try:
            blocks = list(range(reader.metadata().block_count))
            for batch in reader.read_blocks(blocks, ["who"]):
                if "who" in batch.schema.names:
                    found |= {v for v in batch.column("who").to_pylist() if v is not None}
        finally:
            reader.close()
    return found


def doomed(values: set[str]) -> set[str]:
    return {v for v in values if v.startswith("erase-me-")}


def answer(kyma, sql: str) -> list:
    status, body = kyma.http(sql)
    assert status == 200, body
    return body["rows"]


def test_vacuum_erases_deleted_rows_from_every_object(kyma) -> None:
    setup(kyma, "erasable")
    before = answer(kyma, "SELECT count(*), sum(n) FROM erasable WHERE who LIKE 'keep-%'")
    assert kyma.http("DELETE FROM erasable WHERE who LIKE 'erase-me-%'")[1]["status"] == "DELETE 43"
    assert len(doomed(stored_values(kyma, "erasable"))) == 43  # deleted, but still stored
    status, body = kyma.http("VACUUM erasable")
    assert status == 200 and body["status"] == "VACUUM", body
    assert doomed(stored_values(kyma, "erasable")) == set()
    assert answer(kyma, "SELECT count(*), sum(n) FROM erasable") == before
    assert answer(kyma, "SELECT count(*) FROM erasable WHERE who LIKE 'erase-me-%'") == [[0]]


def test_time_travel_before_and_after_vacuum(kyma) -> None:
    setup(kyma, "traveled")
    then = kyma.services.catalog.get_table("traveled").current_snapshot_id
    assert kyma.http("DELETE FROM traveled WHERE n >= 100")[1]["status"] == "DELETE 200"
    old = f"SELECT count(*) FROM traveled AS OF SNAPSHOT {then}"
    assert answer(kyma, old) == [[300]]
    services = kyma.services
    kept = vacuum_table(
        services.catalog,
        services.store,
        services.format,
        "traveled",
        keep_seconds=3600,
        grace=timedelta(0),
    )
    assert kept.rows_erased == 200 and kept.snapshots_expired == 0
    assert answer(kyma, old) == [[300]]  # kept for time travel: the old objects stay
    assert answer(kyma, "SELECT count(*) FROM traveled") == [[100]]
    assert kyma.http("VACUUM")[0] == 200  # every table, keeping no old snapshot
    status, body = kyma.http(old)
    assert status == 404 and f"no snapshot {then}" in body["message"], body
    assert answer(kyma, "SELECT count(*), min(n), max(n) FROM traveled") == [[100, 0, 99]]


CRASHING_VACUUM = """
import sys
from datetime import timedelta
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.local import LocalStore
from kyma.engine.vacuum import vacuum_table
from kyma.stores import Stores
from pathlib import Path

stores = Stores.open(sys.argv[1])
store = LocalStore(Path(sys.argv[2]))
fmt = segment_format("parquet", 64)
vacuum_table(stores.catalog, store, fmt, sys.argv[3], keep_seconds=0, grace=timedelta(0))
"""


@pytest.mark.parametrize("point", ["vacuum.extents_written", "vacuum.committed"])
def test_vacuum_killed_at_a_crash_point_leaves_an_exact_table(kyma, point: str) -> None:
    table = f"crashed_{point.split('.')[1]}"
    setup(kyma, table)
    expected = answer(kyma, f"SELECT count(*), sum(n) FROM {table} WHERE n % 2 = 1")
    assert kyma.http(f"DELETE FROM {table} WHERE n % 2 = 0")[1]["status"] == "DELETE 150"
    env = {**os.environ, "KYMA_CRASH_AT": f"{point}:1"}
    services = kyma.services
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            CRASHING_VACUUM,
            services.catalog.url,
            str(services.store.root),
            table,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == -9, run.stderr
    assert answer(kyma, f"SELECT count(*), sum(n) FROM {table}") == expected
    assert kyma.http(f"DELETE FROM {table} WHERE who LIKE 'erase-me-%'")[0] == 200
    assert kyma.http("VACUUM")[0] == 200
    assert doomed(stored_values(kyma, table)) == set()
    assert answer(kyma, f"SELECT count(*), sum(n) FROM {table} WHERE who LIKE 'keep-%'") == answer(
        kyma, f"SELECT count(*), sum(n) FROM {table}"
    )


def test_compaction_drops_deleted_rows_for_good(kyma) -> None:
    setup(kyma, "compacted")
    assert kyma.http("DELETE FROM compacted WHERE n >= 200")[0] == 200  # a whole extent
    assert kyma.http("DELETE FROM compacted WHERE who LIKE 'erase-me-%'")[0] == 200
    expected = answer(kyma, "SELECT count(*), sum(n) FROM compacted")
    result = kyma.services.compact("compacted")
    assert result.extents_in == 3 and result.extents_out == 1, result
    live = kyma.services.catalog.live_extents("compacted")
    assert [(e.row_count, e.deletes) for e in live] == [(expected[0][0], None)]
    assert answer(kyma, "SELECT count(*), sum(n) FROM compacted") == expected
    assert kyma.http("DELETE FROM compacted")[0] == 200
    setup(kyma, "emptied")
    assert kyma.http("DELETE FROM emptied")[1]["status"] == "DELETE 300"
    result = kyma.services.compact("emptied")
    assert (result.extents_in, result.extents_out) == (3, 0), result
    assert kyma.services.catalog.live_extents("emptied") == []
    assert answer(kyma, "SELECT count(*) FROM emptied") == [[0]]
