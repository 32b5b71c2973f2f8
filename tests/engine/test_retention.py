"""Retention: whole old extents go, old snapshots expire, GC deletes what nothing sees."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from kyma.engine.catalog import parse_duration
from kyma.engine.errors import NotFoundError, SchemaError
from kyma.engine.gc import collect_orphans
from kyma.engine.retention import apply_retention

DAY_NS = 86_400 * 1_000_000_000


def ingest(services, day_offset: int, rows: int = 10) -> None:  # type: ignore[no-untyped-def]
    ts = time.time_ns() - day_offset * DAY_NS
    body = "\n".join(json.dumps({"n": i, "_timestamp": ts + i}) for i in range(rows))
    services.write_path.ingest_ndjson("t", body.encode())


def count(services, snapshot: int | None = None) -> int:  # type: ignore[no-untyped-def]
    at = "" if snapshot is None else f" AS OF SNAPSHOT {snapshot}"
    return services.query.execute(f"SELECT count(*) AS c FROM t{at}").table.to_pylist()[0]["c"]


def test_durations() -> None:
    assert parse_duration("30 days") == 30 * 86_400
    assert parse_duration(" 1 Week ") == 604_800
    assert parse_duration("90 minutes") == 5_400
    with pytest.raises(SchemaError, match="expected a positive"):
        parse_duration("a month")


def test_old_extents_go_then_snapshots_expire_then_gc_deletes(services) -> None:
    services.query.execute("CREATE TABLE t (n long)")
    ingest(services, day_offset=40)
    ingest(services, day_offset=35)
    ingest(services, day_offset=1)
    before = services.catalog.get_table("t").current_snapshot_id
    result = apply_retention(services.catalog, "t", parse_duration("30 days"))
    assert (result.extents_removed, result.snapshots_expired) == (2, 0)  # snapshots are new
    assert count(services) == 10
    assert count(services, before) == 30  # time travel within the window still works
    assert collect_orphans(services.catalog, services.store, timedelta(0)) == []

    later = time.time_ns() + 31 * DAY_NS  # a month on: the old snapshots leave the window
    result = apply_retention(services.catalog, "t", parse_duration("30 days"), now_ns=later)
    assert result.extents_removed == 1 and result.snapshots_expired >= 3
    assert result.extents_forgotten == 3
    assert count(services) == 0
    with pytest.raises(NotFoundError, match="snapshot"):
        count(services, before)
    assert len(collect_orphans(services.catalog, services.store, timedelta(0))) == 3
