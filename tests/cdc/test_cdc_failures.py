"""CDC sync failure modes: a dropped slot, a changed key, source DDL, lost connections."""

from __future__ import annotations

import pytest
from cdc_helpers import body, drain, kyma, wait_until

from kyma.connectors.postgres.cdc import PK_CHANGED, SLOT_MISSING, SyncDisabled

TABLE = (
    "CREATE TABLE items (id int PRIMARY KEY, name text, country text);"
    "INSERT INTO items SELECT g, 'i' || g, 'DE' FROM generate_series(1, 20) g;"
)


def _run_workers(services):  # type: ignore[no-untyped-def]
    return services.connectors.sync.start(services.write_path, lambda q: kyma(services, q))


def test_a_slot_dropped_externally_disables_without_recreating(services, cdc_source) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    _run_workers(services)
    wait_until(lambda: services.connectors.status("pg")["sync"]["phase"] == "streaming")

    def dropped() -> bool:
        try:
            cdc_source.admin("SELECT pg_drop_replication_slot('kyma_1')")
        except Exception:  # the worker holds it for a moment while it peeks
            return False
        return True

    wait_until(dropped)
    wait_until(lambda: services.connectors.describe("pg")["disabled_reason"] == SLOT_MISSING)
    assert services.connectors.status("pg")["sync"]["phase"] == "disabled"
    slots = cdc_source.admin("SELECT slot_name FROM pg_replication_slots")
    assert slots == []  # not recreated


def test_a_changed_primary_key_disables(services, cdc_source, worker) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    w = worker()
    w.start()
    cdc_source.execute("ALTER TABLE items DROP CONSTRAINT items_pkey, ADD PRIMARY KEY (name)")
    cdc_source.execute("INSERT INTO items VALUES (100, 'x', 'FR')")
    with pytest.raises(SyncDisabled) as caught:
        w.step()
    assert caught.value.reason == PK_CHANGED
    with pytest.raises(SyncDisabled, match=PK_CHANGED):  # and at the next start
        worker().start()


def test_added_columns_widen_and_dropped_ones_null_fill(services, cdc_source, worker) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    w = worker()
    w.start()
    cdc_source.execute("ALTER TABLE items ADD COLUMN price numeric(8,2), ADD COLUMN seen bool")
    cdc_source.execute("INSERT INTO items VALUES (21, 'new', 'FR', 9.5, true)")
    drain(w)
    got = kyma(services, "SELECT name, price, seen FROM pg.public.items WHERE id = 21")
    assert got.to_pylist() == [{"name": "new", "price": 9.5, "seen": True}]
    cdc_source.execute("ALTER TABLE items DROP COLUMN country")
    cdc_source.execute("INSERT INTO items VALUES (22, 'later', 1.0, false)")
    cdc_source.execute("UPDATE items SET name = 'one' WHERE id = 1")
    drain(w)
    got = kyma(services, "SELECT id, name, country FROM pg.public.items WHERE id IN (1, 2, 22)")
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "one", "country": None},  # null-filled going forward
        {"id": 2, "name": "i2", "country": "DE"},  # existing data preserved
        {"id": 22, "name": "later", "country": None},
    ]


def test_a_lost_source_connection_reopens_at_the_cursor(services, cdc_source) -> None:
    cdc_source.execute(TABLE)
    services.connectors.create(body(cdc_source, ["public.items"]))
    _run_workers(services)
    wait_until(lambda: services.connectors.status("pg")["sync"]["phase"] == "streaming")
    for i in range(3):
        cdc_source.admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'kyma-cdc'"
        )
        cdc_source.execute("INSERT INTO items VALUES (%s, 'after', 'FR')", (30 + i,))
    count = "SELECT count(*) AS n FROM pg.public.items"
    wait_until(lambda: kyma(services, count).to_pylist() == [{"n": 23}])
    assert services.connectors.describe("pg")["disabled_reason"] is None
    changes = kyma(services, "SELECT count(*) AS n FROM pg.public.items__changes")
    assert changes.to_pylist() == [{"n": 23}]


def test_a_terminal_error_disables_instead_of_retrying(services, cdc_source) -> None:
    cdc_source.execute("CREATE TABLE clash (id int PRIMARY KEY, _kyma_op text)")
    services.connectors.create(body(cdc_source, ["public.clash"]))
    _run_workers(services)  # the same ConfigError every time: retrying cannot help
    wait_until(lambda: services.connectors.describe("pg")["disabled_reason"] == "config_error")
    described = services.connectors.describe("pg")
    assert "'_kyma_op' clashes with a kyma system column" in described["last_error"]
    assert services.connectors.status("pg")["sync"]["phase"] == "disabled"
