"""TRUNCATE, views, CREATE TABLE AS and INSERT … SELECT through POST /v1/query (the
differential against Postgres is tests/pgwire/test_views_tables.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from http_helpers import sql

from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores

ROWS = "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, NULL)"


def test_truncate_is_one_snapshot_and_time_travel_still_reads_before_it(client) -> None:
    sql(client, "CREATE TABLE t (a long, b string)")
    sql(client, ROWS)
    sql(client, "INSERT INTO t (a, b) VALUES (4, 'z')")
    before = client.get("/v1/tables/t").get_json()["snapshot_id"]
    assert sql(client, "TRUNCATE TABLE t")["status"] == "TRUNCATE TABLE"
    after = client.get("/v1/tables/t").get_json()["snapshot_id"]
    assert after > before
    assert sql(client, "SELECT count(*) FROM t")["rows"] == [[0]]
    assert sql(client, "SELECT a FROM t")["rows"] == []
    old = sql(client, f"SELECT a FROM t AS OF SNAPSHOT {before} ORDER BY a")
    assert old["rows"] == [[1], [2], [3], [4]]
    sql(client, "INSERT INTO t (a) VALUES (5)")  # the table takes rows again
    assert sql(client, "SELECT a FROM t")["rows"] == [[5]]
    assert sql(client, "TRUNCATE nope", 404)["message"] == 'relation "nope" does not exist'


def test_a_cdc_synced_table_refuses_truncate_saying_why(client) -> None:
    sql(client, "CREATE TABLE synced (a long) WITH (cdc = 'postgres')")
    answer = sql(client, "TRUNCATE synced", 400)
    assert answer["error"] == "unsupported_statement_error"
    assert "synced from a Postgres source by CDC" in answer["message"]


def test_create_table_as_takes_the_query_types_dynamic_and_vector_too(client, services) -> None:
    sql(client, "CREATE TABLE ev (n long, msg string, attrs dynamic, emb vector(3), ok bool)")
    sql(
        client,
        "INSERT INTO ev (n, msg, attrs, emb, ok) VALUES"
        """ (1, 'a', '{"k": 1}', '[1, 2, 3]', true), (2, 'b', '{"k": 2}', '[4, 5, 6]', false)""",
    )
    made = sql(client, "CREATE TABLE dup AS SELECT n, msg, attrs, emb, ok, n * 2 AS twice FROM ev")
    assert made["status"] == "SELECT 2"
    described = {r[0]: r[1] for r in sql(client, "DESCRIBE dup")["rows"]}
    assert described == {
        "_timestamp": "timestamp",
        "props": "dynamic",
        "n": "long",
        "msg": "string",
        "attrs": "dynamic",
        "emb": "vector(3)",
        "ok": "bool",
        "twice": "long",
    }
    rows = sql(client, "SELECT n, attrs->>'k', emb, twice FROM dup ORDER BY n")["rows"]
    assert rows == [[1, "1", [1.0, 2.0, 3.0], 2], [2, "2", [4.0, 5.0, 6.0], 4]]
    assert len(services.catalog.snapshots("dup")) == 1  # one snapshot holds every row
    refused = sql(client, "CREATE TABLE bad AS SELECT 1.5::numeric AS x", 400)
    assert "numeric" in refused["message"]
    assert sql(client, "SHOW TABLES")["rows"][0][0] != "bad"


def test_views_nest_and_read_the_current_rows(client) -> None:
    sql(client, "CREATE TABLE t (a long, b string)")
    sql(client, ROWS)
    sql(client, "CREATE VIEW big AS SELECT a, b FROM t WHERE a >= 2")
    sql(client, "CREATE VIEW named (n) AS SELECT a FROM big")
    assert sql(client, "SELECT n FROM named ORDER BY n")["rows"] == [[2], [3]]
    sql(client, "INSERT INTO t (a, b) VALUES (9, 'w')")
    assert sql(client, "SELECT max(n) FROM named")["rows"] == [[9]]
    sql(client, "CREATE VIEW everything AS SELECT * FROM t")
    sql(client, "ALTER TABLE t ADD COLUMN c long")  # a view's * stays the columns it had
    assert "c" not in [c["name"] for c in sql(client, "SELECT * FROM everything")["columns"]]
    answer = sql(client, "CREATE VIEW self AS SELECT * FROM self", 404)
    assert answer["error"] == "not_found_error"
    sql(client, "CREATE VIEW listed AS SELECT relname FROM pg_class WHERE relkind = 'v'")
    names = sql(client, "SELECT relname FROM listed ORDER BY 1")["rows"]
    assert names == [["big"], ["everything"], ["listed"], ["named"]]
    refused = sql(client, "INSERT INTO big (a, b) VALUES (5, 'v')", 400)
    assert refused["message"] == 'cannot insert into view "big": kyma\'s views are read-only'


@pytest.fixture
def capped(stores: Stores, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A server whose answers hold at most 100 rows."""
    from kyma.server import create_app
    from kyma.services import wire_services
    from kyma.settings import Settings

    settings = Settings(home=tmp_path / "home", catalog_url=stores.catalog.url, max_result_rows=100)
    services = wire_services(settings, stores, LocalStore(tmp_path / "objects"))
    yield create_app(services).test_client()
    services.close()


def test_insert_select_streams_past_the_result_limit(capped) -> None:
    """Rows written by INSERT … SELECT or CREATE TABLE AS are no answer: they stream into the
    write path, so the result-size limit (100 rows here) does not bound them."""
    sql(capped, "CREATE TABLE src (n long)")
    sql(capped, "INSERT INTO src (n) SELECT * FROM generate_series(1, 5000)")
    assert sql(capped, "SELECT count(*), sum(n) FROM src")["rows"] == [[5000, 12502500]]
    assert sql(capped, "SELECT n FROM src", 413)["error"] == "limit_exceeded_error"
    made = sql(capped, "CREATE TABLE dst AS SELECT n, n % 7 AS m FROM src WHERE n > 1000")
    assert made["status"] == "SELECT 4000"
    inserted = sql(capped, "INSERT INTO dst (n, m) SELECT n, 0 FROM src WHERE n <= 1000")
    assert inserted["status"] == "INSERT 0 1000"
    assert sql(capped, "SELECT count(*), sum(n) FROM dst")["rows"] == [[5000, 12502500]]
