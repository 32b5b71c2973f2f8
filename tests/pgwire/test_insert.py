"""INSERT … VALUES and INSERT … SELECT through the one write path, against a real ``kyma
serve`` (the module's ``pg`` server): HTTP, the Postgres protocol (psycopg's rowcount), Flight
SQL's ExecuteUpdate and ``kyma sql``; bad values refused whole; token scopes."""

from __future__ import annotations

import json

import adbc_driver_flightsql.dbapi
import psycopg
import pytest
from adbc_driver_flightsql import DatabaseOptions
from pgwire_serve import PgServe
from serve_helpers import kyma, request

COLUMNS = "(n long, msg string, r real, ok bool, ts timestamp, attrs dynamic, emb vector(3))"


def http(pg: PgServe, sql: str, token: str = "admin") -> tuple[int, dict]:
    status, _, body = request(
        f"{pg.serve.url}/v1/query",
        json.dumps({"sql": sql}).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {pg.tokens[token]}"},
    )
    return status, json.loads(body)


def snapshot(pg: PgServe, table: str) -> int | None:
    status, _, body = request(
        f"{pg.serve.url}/v1/tables/{table}",
        headers={"Authorization": f"Bearer {pg.tokens['admin']}"},
    )
    assert status == 200, body
    return json.loads(body)["snapshot_id"]


@pytest.fixture(scope="module")
def typed(pg: PgServe) -> str:
    assert http(pg, f"CREATE TABLE typed {COLUMNS}")[0] == 200
    return "typed"


def test_values_of_every_kind_commit_one_snapshot(pg: PgServe, typed: str) -> None:
    before = snapshot(pg, typed)
    status, answer = http(
        pg,
        "INSERT INTO typed (n, msg, r, ok, ts, attrs, emb) VALUES"
        " (1, 'it''s', 1.5, true, '2024-05-01T12:00:00Z', '{\"a\": [1, \"x\"]}',"
        " ARRAY[0.5, 1, -2]),"
        " (-2, NULL, -0.25, false, TIMESTAMP '2024-05-02 00:00:00Z', '42'::jsonb, NULL)",
    )
    assert status == 200, answer
    assert answer["status"] == "INSERT 0 2"
    after = snapshot(pg, typed)
    assert after is not None and after != before
    status, rows = http(pg, "SELECT n, msg, r, ok, ts, attrs, emb FROM typed ORDER BY n")
    assert status == 200, rows
    assert rows["rows"] == [
        [-2, None, -0.25, False, "2024-05-02T00:00:00.000000000Z", 42, None],
        [1, "it's", 1.5, True, "2024-05-01T12:00:00.000000000Z", {"a": [1, "x"]}, [0.5, 1.0, -2.0]],
    ]


def test_a_bad_value_is_a_400_naming_row_and_column_and_commits_nothing(
    pg: PgServe, typed: str
) -> None:
    before = snapshot(pg, typed)
    status, answer = http(pg, "INSERT INTO typed (n, msg) VALUES (7, 'ok'), ('seven', 'bad')")
    assert status == 400, answer
    assert "VALUES row 2, column 'n'" in answer["message"], answer
    status, answer = http(pg, "INSERT INTO typed (attrs) VALUES ('{not json')")
    assert status == 400 and "VALUES row 1, column 'attrs'" in answer["message"]
    status, answer = http(pg, "INSERT INTO typed (n, msg) VALUES (1)")
    assert status == 400 and "VALUES row 1 has 1 values, expected 2" in answer["message"]
    assert snapshot(pg, typed) == before
    assert http(pg, "SELECT count(*) AS c FROM typed WHERE n = 7")[1]["rows"] == [[0]]


def test_a_column_the_table_lacks_evolves_it_as_ingest_does(pg: PgServe) -> None:
    assert http(pg, "CREATE TABLE evolving (n long)")[0] == 200
    status, answer = http(pg, "INSERT INTO evolving (n, region) VALUES (1, 'eu'), (2, NULL)")
    assert status == 200 and answer["status"] == "INSERT 0 2", answer
    status, rows = http(pg, "SELECT n, region FROM evolving ORDER BY n")
    assert status == 200 and rows["rows"] == [[1, "eu"], [2, None]], rows


def test_insert_select_over_psycopg_counts_rows(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE copied (n long, label string, attrs dynamic, emb vector(3))")
        cur.execute(
            "INSERT INTO copied (label, n, attrs, emb) SELECT msg, n * 10, attrs, emb FROM events"
            " WHERE n < 3"
        )
        assert cur.rowcount == 2
        cur.execute("INSERT INTO copied (n, label) VALUES (%s, %s)", (99, "param"))
        assert cur.rowcount == 1
        cur.execute("INSERT INTO copied SELECT n + 100, msg FROM events WHERE n = 2")  # by position
        assert cur.rowcount == 1
        cur.execute("INSERT INTO copied VALUES (5, 'by position')")
        assert cur.rowcount == 1
        cur.execute("CREATE TABLE twin (n long, label string, attrs dynamic, emb vector(3))")
        cur.execute("INSERT INTO twin SELECT * FROM copied")  # _timestamp and props by name
        assert cur.rowcount == 5
        cur.execute(
            "SELECT count(*) FROM twin AS t JOIN copied AS c"
            " ON t._timestamp = c._timestamp AND t.n = c.n AND t.label = c.label"
        )
        assert cur.fetchone() == (5,)
        cur.execute("SELECT n, label, attrs, emb FROM copied ORDER BY n")
        assert cur.fetchall() == [
            (5, "by position", None, None),
            (10, "GET /", {"http": {"method": "GET"}, "tags": ["a", "b"]}, [0.5, 1.0, -2.0]),
            (20, "it's", 42, [0.1, 0.0, 3.0]),
            (99, "param", None, None),
            (102, "it's", None, None),
        ]
        with pytest.raises(psycopg.Error) as raised:
            cur.execute("INSERT INTO copied (n, nope) SELECT n, msg FROM events")
        assert "column 'nope' is not in table 'copied'" in str(raised.value)


def test_flight_sql_execute_update_returns_the_row_count(pg: PgServe, typed: str) -> None:
    options = {DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {pg.tokens['admin']}"}
    with (
        adbc_driver_flightsql.dbapi.connect(
            pg.serve.flight_url, db_kwargs=options, autocommit=True
        ) as conn,
        conn.cursor() as cur,
    ):
        cur.adbc_statement.set_sql_query("INSERT INTO typed (n) VALUES (1001), (1002), (1003)")
        assert cur.adbc_statement.execute_update() == 3
    assert http(pg, "SELECT count(*) AS c FROM typed WHERE n > 1000")[1]["rows"] == [[3]]


def test_kyma_sql_prints_the_command_tag(pg: PgServe, typed: str) -> None:
    ran = kyma(
        pg.serve.home,
        "sql",
        "--url",
        pg.serve.url,
        "--token",
        pg.tokens["admin"],
        "-c",
        "INSERT INTO typed (n, msg) VALUES (2001, 'cli')",
    )
    assert ran.returncode == 0, ran.stderr
    assert "INSERT 0 1" in ran.stdout


def test_insert_needs_ingest_of_the_table_and_read_of_what_it_selects(
    pg: PgServe, typed: str
) -> None:
    pg.tokens["read"] = pg.new_token(["read"])
    pg.tokens["ingest_other"] = pg.new_token(["ingest"], ["other"])
    pg.tokens["ingest_typed"] = pg.new_token(["ingest"], ["typed"])
    before = snapshot(pg, typed)
    for name in ("read", "ingest_other", "read_other"):
        status, answer = http(pg, "INSERT INTO typed (n) VALUES (3001)", name)
        assert status == 403, (name, answer)
    status, answer = http(pg, "INSERT INTO typed (n) SELECT n FROM events", "ingest_typed")
    assert status == 403 and "scope 'read'" in answer["message"], answer
    assert snapshot(pg, typed) == before
    status, answer = http(pg, "INSERT INTO typed (n) VALUES (3002)", "ingest_typed")
    assert status == 200 and answer["status"] == "INSERT 0 1", answer
    with psycopg.connect(pg.dsn(pg.tokens["read"]), connect_timeout=10) as conn:
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("INSERT INTO typed (n) VALUES (3003)")
        assert raised.value.sqlstate == "42501"
