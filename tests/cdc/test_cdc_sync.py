"""CDC sync end to end on a real Postgres: snapshot, streaming, TOAST, current state."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from cdc_helpers import body, drain, equal_both_ways, kyma

from kyma.connectors.postgres.cdc import NO_PRIMARY_KEY
from kyma.engine.errors import NotFoundError, SqlError

USERS = """
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, country text, score numeric(10,2),
                    born timestamptz, tags jsonb);
INSERT INTO users SELECT g, 'user' || g, CASE WHEN g % 2 = 0 THEN 'DE' ELSE 'FR' END,
                         g * 1.5, '2020-01-01T00:00:00Z'::timestamptz + g * interval '1 hour',
                         jsonb_build_object('n', g)
FROM generate_series(1, 200) g;
"""


def test_snapshot_then_streaming_insert_update_delete(services, cdc_source, worker) -> None:
    cdc_source.execute(USERS)
    services.connectors.create(body(cdc_source, ["public.users"]))
    w = worker()
    w.start()
    assert kyma(services, "SELECT count(*) AS n FROM pg.public.users").to_pylist() == [{"n": 200}]
    equal_both_ways(services, "pg.public.users")
    cdc_source.execute("INSERT INTO users VALUES (201, 'new', 'US', 1.25, now(), '[1, 2]')")
    cdc_source.execute("UPDATE users SET name = 'renamed', score = NULL WHERE id = 5")
    cdc_source.execute("DELETE FROM users WHERE id IN (6, 7)")
    assert drain(w) == 3
    equal_both_ways(services, "pg.public.users")
    got = kyma(
        services, "SELECT name, score FROM pg.public.users WHERE id IN (5, 6, 201) ORDER BY id"
    )
    assert got.to_pylist() == [{"name": "renamed", "score": None}, {"name": "new", "score": 1.25}]
    changes = kyma(
        services,
        "SELECT _kyma_pk, _kyma_op, _kyma_lsn, _kyma_event_at FROM pg.public.users__changes"
        " WHERE _kyma_pk IN ('5', '6', '201') ORDER BY _kyma_pk, _kyma_lsn",
    ).to_pylist()
    assert [(c["_kyma_pk"], c["_kyma_op"]) for c in changes] == [
        ("201", "insert"),
        ("5", "insert"),
        ("5", "update"),
        ("6", "insert"),
        ("6", "delete"),
    ]
    assert all(c["_kyma_event_at"] is not None and "/" in c["_kyma_lsn"] for c in changes)
    # the kyma table's own name reads the same current state
    assert kyma(services, "SELECT count(*) AS n FROM pg__public__users").to_pylist() == [{"n": 199}]
    status = services.connectors.status("pg")["sync"]
    assert status["phase"] == "streaming" and status["rows_snapshotted"] == 200
    assert status["tables"][0]["kyma_table"] == "pg__public__users"
    assert isinstance(status["lag_bytes"], int)


def test_writes_during_the_snapshot_end_exact(services, cdc_source, worker) -> None:
    cdc_source.execute(
        "CREATE TABLE events (k int PRIMARY KEY, v int NOT NULL);"
        "INSERT INTO events SELECT g, 0 FROM generate_series(1, 50000) g;"
    )
    services.connectors.create(body(cdc_source, ["public.events"]))
    w = worker()
    stop = threading.Event()
    writes = []

    def writer() -> None:
        with psycopg.connect(cdc_source.url, password=cdc_source.password) as conn:
            i = 0
            while not stop.is_set():
                i += 1
                with conn.transaction():
                    conn.execute("UPDATE events SET v = v + 1 WHERE k = %s", (i % 50000 + 1,))
                    conn.execute(
                        "INSERT INTO events VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = -1",
                        (100000 + i, i),
                    )
                    conn.execute("DELETE FROM events WHERE k = %s", ((i * 7) % 50000 + 1,))
                writes.append(i)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        time.sleep(0.3)
        w.start()
        for _ in range(3):  # stream while the writer still writes
            w.step()
    finally:
        stop.set()
        thread.join(timeout=30)
    drain(w)
    assert len(writes) > 5
    equal_both_ways(services, "pg.public.events")
    dupes = kyma(
        services,
        "SELECT _kyma_pk, _kyma_lsn, count(*) AS n FROM pg.public.events__changes"
        " GROUP BY 1, 2 HAVING count(*) > 1",
    )
    assert dupes.num_rows == 0


def test_toast_in_a_mixed_transaction(services, cdc_source, worker) -> None:
    cdc_source.execute(
        "CREATE TABLE docs (a int, b text, body text, note text, PRIMARY KEY (b, a));"
        "ALTER TABLE docs ALTER body SET STORAGE EXTERNAL;"
        "INSERT INTO docs SELECT g, 'k' || g, repeat(chr(65 + g), 9000), 'n' FROM"
        " generate_series(1, 6) g;"
    )
    services.connectors.create(body(cdc_source, ["public.docs"]))
    w = worker()
    w.start()
    cdc_source.execute(
        "BEGIN;"
        " UPDATE docs SET note = 'touched' WHERE a = 1;"  # body unchanged: TOAST not sent
        " INSERT INTO docs VALUES (7, 'k7', repeat('z', 9000), 'new');"
        " UPDATE docs SET note = 'twice' WHERE a = 7;"  # unchanged TOAST of a row inserted here
        " DELETE FROM docs WHERE a = 2;"
        " UPDATE docs SET body = repeat('y', 9000) WHERE a = 3;"
        "COMMIT;"
        "UPDATE docs SET note = 'later' WHERE a = 1;"  # unchanged TOAST from kyma's version
    )
    drain(w)
    equal_both_ways(services, "pg.public.docs")
    got = kyma(services, "SELECT a, length(body) AS n, note FROM pg.public.docs ORDER BY a")
    assert [(r["a"], r["n"], r["note"]) for r in got.to_pylist()] == [
        (1, 9000, "later"),
        (3, 9000, "touched")[:2] + ("n",),
        (4, 9000, "n"),
        (5, 9000, "n"),
        (6, 9000, "n"),
        (7, 9000, "twice"),
    ]
    keys = kyma(services, "SELECT DISTINCT _kyma_pk FROM pg.public.docs__changes ORDER BY 1")
    assert "k7:7" in keys.column("_kyma_pk").to_pylist()  # information_schema order: (b, a)
    ops = kyma(
        services,
        "SELECT _kyma_op, count(*) AS n FROM pg.public.docs__changes"
        " WHERE _kyma_pk = 'k7:7' GROUP BY 1",
    )
    assert ops.to_pylist() == [{"_kyma_op": "insert", "n": 1}]  # collapsed in its transaction


def test_modes_and_names(services, cdc_source, worker) -> None:
    cdc_source.execute(USERS + "CREATE TABLE other (id int PRIMARY KEY);")
    services.connectors.create(body(cdc_source, ["public.users"], mode="sync", name="mirror"))
    worker("mirror").start()
    assert kyma(services, "SELECT count(*) AS n FROM mirror.public.users").to_pylist() == [
        {"n": 200}
    ]
    with pytest.raises(SqlError, match="mode 'sync'"):
        kyma(services, "SELECT * FROM live(mirror.public.users)")
    with pytest.raises(NotFoundError, match="not synced"):
        kyma(services, "SELECT * FROM mirror.public.other")


def test_a_table_without_primary_key_is_rejected(services, cdc_source, worker) -> None:
    cdc_source.execute("CREATE TABLE nopk (a int, b text)")
    answer = services.connectors.create(body(cdc_source, ["public.nopk"]))
    assert answer["disabled_reason"] == NO_PRIMARY_KEY
    assert answer["state"] == "disabled"
    assert "public.nopk" in services.connectors.describe("pg")["last_error"]
