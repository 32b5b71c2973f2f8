"""Metadata follows the scopes of data: a token limited to some tables neither lists nor
describes the others, over HTTP, SQL and Flight SQL; admin still sees everything.

The serve here has tables ``logs`` and ``secret``, and two connectors, ``hr`` and ``hr_copy``,
on a source database with ``public.teams`` and ``public.people`` (whose ``ssn`` is the column
to keep hidden). Token ``limited`` reads ``logs`` and ``hr.public.teams``; ``read`` every table.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator

import psycopg
import pyarrow.flight as flight
import pytest
from psycopg import sql
from secure_serve import Secure, secure_serve
from source_postgres import SourcePostgres

SOURCE_DB = "metadata_scopes"
SECRET_ENV = "KYMA_SECRET_METADATA_SOURCE"
GRANTS = {
    "limited": {"scopes": ["read"], "tables": ["logs", "hr.public.teams"]},
    "read": {"scopes": ["read"]},
}
SERVER_WIDE = (
    "/v1/connectors",
    "/v1/connectors/hr",
    "/v1/connectors/hr/status",
    "/v1/sources",
    "/v1/jobs",
    "/metrics",
)


@pytest.fixture(scope="module")
def meta(source_pg: SourcePostgres) -> Iterator[Secure]:
    password = secrets.token_urlsafe(16)
    with psycopg.connect(source_pg.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {SOURCE_DB}")
        role = sql.SQL("CREATE ROLE metadata_reader LOGIN PASSWORD {}")
        conn.execute(role.format(sql.Literal(password)))
    admin_url = f"{source_pg.admin_url.rsplit('/', 1)[0]}/{SOURCE_DB}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE teams (id int, name text);"
            " CREATE TABLE people (id int, name text, ssn text);"
            " INSERT INTO teams VALUES (1, 'core');"
            " INSERT INTO people VALUES (1, 'ada', '078-05-1120');"
            " GRANT SELECT ON teams, people TO metadata_reader"
        )
    with secure_serve(GRANTS, ("logs", "secret"), **{SECRET_ENV: password}) as secure:
        for name in ("hr", "hr_copy"):
            connection = {
                "url": source_pg.url(SOURCE_DB, "metadata_reader"),
                "secret_ref": f"$env:{SECRET_ENV}",
                "pool_size": 1,
            }
            body = {"name": name, "type": "postgres", "connection": connection}
            status, answer, _ = secure.call("/v1/connectors", secure.tokens["admin"], body=body)
            assert status == 201 and answer["state"] == "ready", answer
        yield secure


@pytest.fixture(autouse=True)
def healthy_after(meta: Secure) -> Iterator[None]:
    """After every case, the server answers /healthz within a second."""
    yield
    meta.assert_healthy()


def _names(answer: dict) -> list[str]:
    return [t["name"] for t in answer["tables"]]


def test_table_listings_show_only_granted_tables(meta: Secure) -> None:
    limited, admin = meta.tokens["limited"], meta.tokens["admin"]
    status, answer, _ = meta.call("/v1/tables", limited)
    assert status == 200 and _names(answer) == ["logs"], answer
    status, answer, _ = meta.sql("SHOW TABLES", limited)
    assert status == 200 and [r[0] for r in answer["rows"]] == ["logs"], answer
    status, answer, _ = meta.call("/v1/tables", admin)
    assert status == 200 and {"logs", "secret"} <= set(_names(answer))
    status, answer, _ = meta.sql("SHOW TABLES", admin)
    assert {"logs", "secret"} <= {r[0] for r in answer["rows"]}


def test_describe_refuses_tables_not_granted_whether_they_exist_or_not(meta: Secure) -> None:
    limited = meta.tokens["limited"]
    assert meta.sql("DESCRIBE logs", limited)[0] == 200
    for table in ("secret", "no_such_table"):
        for status, answer, _ in (
            meta.sql(f"DESCRIBE {table}", limited),
            meta.call(f"/v1/tables/{table}", limited),
            meta.call(f"/v1/tables/{table}/stats", limited),
        ):
            assert status == 403 and answer["table"] == table, answer
            assert "msg" not in json.dumps(answer)
    assert meta.sql("DESCRIBE secret", meta.tokens["admin"])[0] == 200
    assert meta.sql("DESCRIBE no_such_table", meta.tokens["admin"])[0] == 404


@pytest.mark.parametrize("path", SERVER_WIDE)
def test_server_wide_state_needs_a_token_for_every_table(meta: Secure, path: str) -> None:
    status, answer, _ = meta.call(path, meta.tokens["limited"])
    assert status == 403 and answer["scope"] == "read", answer
    assert "every table" in answer["message"]
    for token in ("read", "admin"):  # /metrics answers Prometheus text: read as bytes
        assert meta.call(path, meta.tokens[token], raw=path == "/metrics")[0] == 200, token


@pytest.mark.parametrize("statement", ["SHOW CONNECTORS", "SHOW SOURCES"])
def test_show_connectors_and_sources_need_a_token_for_every_table(
    meta: Secure, statement: str
) -> None:
    status, answer, _ = meta.sql(statement, meta.tokens["limited"])
    assert status == 403 and "every table" in answer["message"], answer
    status, answer, _ = meta.sql(statement, meta.tokens["read"])
    assert status == 200, answer
    if statement == "SHOW CONNECTORS":
        assert {r[1] for r in answer["rows"]} == {"hr", "hr_copy"}


def test_connector_tables_show_only_granted_tables(meta: Secure) -> None:
    limited, admin = meta.tokens["limited"], meta.tokens["admin"]
    connector_id = meta.call("/v1/connectors/hr", admin)[1]["id"]
    for key in ("hr", str(connector_id)):
        status, answer, _ = meta.call(f"/v1/connectors/{key}/tables", limited)
        assert status == 200, answer
        assert [(t["schema"], t["name"]) for t in answer["tables"]] == [("public", "teams")]
        assert "people" not in json.dumps(answer) and "ssn" not in json.dumps(answer)
    status, answer, _ = meta.call("/v1/connectors/hr/tables", admin)
    people = next(t for t in answer["tables"] if t["name"] == "people")
    assert [c["name"] for c in people["columns"]] == ["id", "name", "ssn"]
    # A connector with no granted table, and one that does not exist, are refused alike.
    refusals = []
    for key in ("hr_copy", "nope"):
        status, answer, _ = meta.call(f"/v1/connectors/{key}/tables", limited)
        assert status == 403 and answer["error"] == "permission_denied", answer
        refusals.append(answer["message"].replace(repr(key), "KEY"))
    assert refusals[0] == refusals[1]
    # The same rule as the data: what the listing shows is what a query may read.
    status, answer, _ = meta.sql("SELECT name FROM hr.public.teams", limited)
    assert status == 200 and answer["rows"] == [["core"]], answer
    status, answer, _ = meta.sql("SELECT ssn FROM hr.public.people", limited)
    assert status == 403 and answer["table"] == "hr.public.people", answer


def test_flight_listings_need_a_token(meta: Secure) -> None:
    anonymous, no_token = meta.flight(None)
    with anonymous:
        with pytest.raises(flight.FlightUnauthenticatedError, match="missing token"):
            list(anonymous.list_actions(options=no_token))
        with pytest.raises(flight.FlightUnauthenticatedError, match="missing token"):
            list(anonymous.list_flights(options=no_token))
    client, options = meta.flight(meta.tokens["limited"])
    with client:
        actions = {a.type for a in client.list_actions(options=options)}
        assert "CreatePreparedStatement" in actions
        assert list(client.list_flights(options=options)) == []


def _objects(meta: Secure, token: str, depth: str) -> list[dict]:
    with meta.adbc(meta.tokens[token]) as conn:
        return conn.adbc_get_objects(depth=depth).read_all().to_pylist()


def _tables(objects: list[dict]) -> dict[tuple[str, str, str], list[str]]:
    return {
        (c["catalog_name"], s["db_schema_name"], t["table_name"]): [
            col["column_name"] for col in t["table_columns"] or []
        ]
        for c in objects
        for s in c["catalog_db_schemas"] or []
        for t in s["db_schema_tables"] or []
    }


def test_flight_sql_metadata_shows_only_granted_tables(meta: Secure) -> None:
    catalogs = {c["catalog_name"] for c in _objects(meta, "limited", "catalogs")}
    assert catalogs == {"kyma", "hr"}
    schemas = {
        (c["catalog_name"], s["db_schema_name"])
        for c in _objects(meta, "limited", "db_schemas")
        for s in c["catalog_db_schemas"] or []
    }
    assert schemas == {("kyma", "public"), ("hr", "public")}
    objects = _objects(meta, "limited", "all")
    tables = _tables(objects)
    assert set(tables) == {("kyma", "public", "logs"), ("hr", "public", "teams")}
    assert tables[("hr", "public", "teams")] == ["id", "name"]
    shown = json.dumps(objects, default=str)
    assert "ssn" not in shown and "secret" not in shown and "people" not in shown
    with (
        meta.adbc(meta.tokens["limited"]) as conn,
        pytest.raises(Exception, match="No table found"),
    ):
        conn.adbc_get_table_schema("people", catalog_filter="hr", db_schema_filter="public")
    everything = _tables(_objects(meta, "admin", "all"))
    assert everything[("hr_copy", "public", "people")] == ["id", "name", "ssn"]
    assert ("kyma", "public", "secret") in everything
    admin_catalogs = {c["catalog_name"] for c in _objects(meta, "admin", "catalogs")}
    assert admin_catalogs == {"kyma", "hr", "hr_copy"}
