"""The replication slot's life: dropped with the connector, re-created (with a new snapshot)
on re-enable, invalidation detected, WAL released while nothing synced commits, fencing."""

from __future__ import annotations

import time

import cbor2
import pytest
from cdc_helpers import body, drain, kyma, wait_until

from kyma.connectors.postgres.cdc import SLOT_INVALIDATED, SLOT_MISSING
from kyma.engine.errors import FencedWriterError

TABLE = (
    "CREATE TABLE items (id int PRIMARY KEY, name text, note tsvector);"
    "INSERT INTO items SELECT g, 'i' || g, to_tsvector('word' || g) FROM generate_series(1, 50) g;"
)
MB = 2**20


def _streaming(services, cdc_source) -> int:  # type: ignore[no-untyped-def]
    """Create the connector, run its worker here until it streams; its id."""
    cdc_source.execute(TABLE)
    connector_id = services.connectors.create(body(cdc_source, ["public.items"]))["id"]
    services.connectors.sync.start(services.write_path, lambda q: kyma(services, q))
    wait_until(lambda: services.connectors.status("pg")["sync"]["phase"] == "streaming")
    return connector_id


def _slots(cdc_source) -> list[tuple]:  # type: ignore[no-untyped-def]
    return cdc_source.admin("SELECT slot_name, wal_status FROM pg_replication_slots")


def _same_as_source(services) -> bool:  # type: ignore[no-untyped-def]
    for a, b in (
        ("pg.public.items", "live(pg.public.items)"),
        ("live(pg.public.items)", "pg.public.items"),
    ):
        if kyma(services, f"SELECT id, name FROM {a} EXCEPT SELECT id, name FROM {b}").num_rows:
            return False
    return True


def test_dropping_the_connector_drops_its_slot_and_publication(services, cdc_source) -> None:
    connector_id = _streaming(services, cdc_source)
    slot = f"kyma_{connector_id}"
    assert _slots(cdc_source) == [(slot, "reserved")]
    assert cdc_source.admin("SELECT pubname FROM pg_publication") == [(slot,)]
    services.connectors.drop("pg")
    assert _slots(cdc_source) == []
    assert cdc_source.admin("SELECT pubname FROM pg_publication") == []


def test_re_enabling_after_a_dropped_slot_re_snapshots(services, cdc_source) -> None:
    connector_id = _streaming(services, cdc_source)
    services.connectors.sync.stop(connector_id)
    cdc_source.admin(f"SELECT pg_drop_replication_slot('kyma_{connector_id}')")
    services.connectors.sync.start(services.write_path, lambda q: kyma(services, q))
    wait_until(lambda: services.connectors.describe("pg")["disabled_reason"] == SLOT_MISSING)
    # What happens while no slot records it: only a new snapshot can tell kyma.
    cdc_source.execute("DELETE FROM items WHERE id <= 10")
    cdc_source.execute("UPDATE items SET name = 'changed' WHERE id = 20")
    cdc_source.execute("INSERT INTO items VALUES (99, 'new', NULL)")
    services.connectors.enable("pg")
    wait_until(lambda: services.connectors.status("pg")["sync"]["phase"] == "streaming")
    assert _same_as_source(services)
    assert kyma(services, "SELECT count(*) AS n FROM pg.public.items").to_pylist() == [{"n": 41}]
    cdc_source.execute("UPDATE items SET name = 'streamed' WHERE id = 30")  # and it streams
    named = "SELECT name FROM pg.public.items WHERE id = 30"
    wait_until(lambda: kyma(services, named).to_pylist() == [{"name": "streamed"}])
    assert _slots(cdc_source) == [(f"kyma_{connector_id}", "reserved")]


def test_an_invalidated_slot_is_detected_and_re_enabling_recovers(
    services, cdc_source, cdc_server
) -> None:
    connector_id = _streaming(services, cdc_source)
    services.connectors.sync.stop(connector_id)  # the slot falls behind
    cdc_source.execute("CREATE TABLE filler (id serial PRIMARY KEY, pad text)")
    cdc_source.admin("ALTER SYSTEM SET max_slot_wal_keep_size = '64kB'")
    cdc_source.admin("SELECT pg_reload_conf()")
    try:
        for _ in range(20):
            cdc_source.execute(
                "INSERT INTO filler (pad) SELECT repeat('x', 100) FROM generate_series(1, 1000)"
            )
            cdc_source.admin("SELECT pg_switch_wal()")
            cdc_source.admin("CHECKPOINT")
            if _slots(cdc_source) == [(f"kyma_{connector_id}", "lost")]:
                break
        assert _slots(cdc_source) == [(f"kyma_{connector_id}", "lost")]
        started = time.monotonic()
        services.connectors.sync.start(services.write_path, lambda q: kyma(services, q))
        wait_until(
            lambda: services.connectors.describe("pg")["disabled_reason"] == SLOT_INVALIDATED
        )
        assert time.monotonic() - started < 30
        assert "wal_status is 'lost'" in services.connectors.describe("pg")["last_error"]
    finally:
        cdc_source.admin("ALTER SYSTEM RESET max_slot_wal_keep_size")
        cdc_source.admin("SELECT pg_reload_conf()")
    cdc_source.execute("DELETE FROM items WHERE id = 1")
    services.connectors.enable("pg")  # drops the lost slot, makes a new one, re-snapshots
    wait_until(lambda: services.connectors.status("pg")["sync"]["phase"] == "streaming")
    assert _same_as_source(services)
    assert _slots(cdc_source) == [(f"kyma_{connector_id}", "reserved")]


def test_quiet_tables_hold_no_wal_back(services, cdc_source) -> None:
    connector_id = _streaming(services, cdc_source)
    cdc_source.execute("CREATE TABLE unsynced (id int, pad text)")
    cdc_source.execute(
        "INSERT INTO unsynced SELECT g, repeat(md5(g::text), 60) FROM generate_series(1, 50000) g"
    )
    ((written,),) = cdc_source.admin("SELECT pg_current_wal_lsn()::text")  # ~100 MB later
    passed = (
        "SELECT confirmed_flush_lsn >= %s::pg_lsn,"
        " (pg_current_wal_lsn() - confirmed_flush_lsn)::bigint FROM pg_replication_slots"
        f" WHERE slot_name = 'kyma_{connector_id}'"
    )
    # The slot moves past the WAL nobody syncs (a mid-insert confirm would not be enough).
    wait_until(lambda: cdc_source.admin(passed, (written,))[0][0])
    assert cdc_source.admin(passed, (written,))[0][1] < 64 * MB


def test_an_unmapped_type_reads_as_dynamic_with_a_warning(services, cdc_source, worker) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    w = worker()
    w.start()
    warning = "public.items.note: column type 'tsvector' has no kyma mapping; it reads as dynamic"
    assert warning in services.connectors.describe("pg")["last_error"]
    assert services.connectors.describe("pg")["disabled_reason"] is None
    got = kyma(services, "SELECT note FROM pg.public.items WHERE id = 3").column("note")
    assert [cbor2.loads(v) for v in got.to_pylist()] == ["'word3':1"]  # dynamic is CBOR
    cdc_source.execute("ALTER TABLE items ADD COLUMN later macaddr8")
    cdc_source.execute("INSERT INTO items VALUES (51, 'x', NULL, '08:00:2b:01:02:03:04:05')")
    drain(w)
    assert (
        "public.items.later: column type 'macaddr8'"
        in services.connectors.describe("pg")["last_error"]
    )
    got = kyma(services, "SELECT later FROM pg.public.items WHERE id = 51").column("later")
    assert [cbor2.loads(v) for v in got.to_pylist()] == ["08:00:2b:01:02:03:04:05"]


def test_a_second_worker_fences_the_first(services, cdc_source, worker) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    first = worker()
    first.start()
    second = worker()
    second.start()  # claims the connector: the first one's epoch is stale
    cdc_source.execute("UPDATE items SET name = 'twice?' WHERE id = 1")
    with pytest.raises(FencedWriterError):
        first.step()
    assert drain(second) == 1
    per_version = kyma(
        services,
        "SELECT _kyma_pk, _kyma_lsn, count(*) AS n FROM pg.public.items__changes GROUP BY 1, 2"
        " HAVING count(*) > 1",
    )
    assert per_version.num_rows == 0
    assert kyma(services, "SELECT name FROM pg.public.items WHERE id = 1").to_pylist() == [
        {"name": "twice?"}
    ]
