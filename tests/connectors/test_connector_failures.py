"""Connector definitions, scope, SQL statements, failure modes and secrets, over HTTP."""

from __future__ import annotations

import json
import logging
import socket

import psycopg
import pytest
from http_helpers import sql

SECRET_ENV = "KYMA_SECRET_TEST_SOURCE"


def body(source_db, **connection) -> dict:  # type: ignore[no-untyped-def]
    return {
        "name": connection.pop("name", "src"),
        "type": "postgres",
        "connection": {"url": source_db.url, "secret_ref": f"$env:{SECRET_ENV}", **connection},
    }


@pytest.fixture(autouse=True)
def secret(source_db, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(SECRET_ENV, source_db.password)
    return source_db.password


def create(client, payload: dict, status: int = 201) -> dict:  # type: ignore[no-untyped-def]
    answer = client.post("/v1/connectors", json=payload)
    assert answer.status_code == status, answer.get_json()
    return answer.get_json()


# ---------------------------------------------------------------- definitions


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"name": "Bad-Name"}, "name: 'Bad-Name' is not a connector name"),
        ({"type": "mysql"}, "type: expected one of ['postgres']"),
        ({"mode": "both"}, "sync.tables: mode 'both' needs at least one 'schema.table'"),
        ({"colour": "red"}, "colour: unknown field"),
        ({"connection": {"url": "mysql://h/db"}}, "connection.url: expected postgres://"),
        (
            {"connection": {"url": "postgres://app:hunter2@h/db"}},
            "connection.url: must not hold a password",
        ),
        ({"connection": {"url": "postgres://h/db", "tls": "yes"}}, "connection.tls: expected"),
        ({"connection": {"url": "postgres://h/db", "pool_size": 0}}, "connection.pool_size"),
        ({"connection": {"url": "postgres://h/db", "secret_ref": "hunter2"}}, "secret_ref"),
        ({"scope": {"exclude_tables": ["audit_log"]}}, "scope.exclude_tables: expected"),
    ],
)
def test_bad_definitions_are_400_naming_the_field(client, source_db, change, fragment) -> None:
    payload = {**body(source_db), **change}
    answer = create(client, payload, 400)
    assert answer["error"] == "config_error" and fragment in answer["message"]
    assert "hunter2" not in json.dumps(answer)
    assert client.get("/v1/connectors").get_json() == {"connectors": []}


def test_scope_filters_schemas_and_tables_and_refreshes_on_demand(client, source_db) -> None:
    payload = body(source_db)
    payload["scope"] = {"include_schemas": ["public"], "exclude_tables": ["public.audit_log"]}
    create(client, payload)
    assert sql(client, "SELECT count(*) FROM src.public.nopk")["rows"] == [[5]]
    tables = client.get("/v1/connectors/src/tables").get_json()["tables"]
    assert {t["schema"] for t in tables} == {"public"}
    assert "audit_log" not in {t["name"] for t in tables}
    (items,) = [t for t in tables if t["name"] == "items"]
    assert items["columns"][3] == {
        "name": "price",
        "type": "real",
        "source_type": "numeric(10,2)",
    }
    for table in ("src.public.audit_log", "src.billing.invoices", "src.public.nosuch"):
        answer = sql(client, f"SELECT * FROM {table}", 404)
        assert "out of the connector's scope" in answer["message"]
    with psycopg.connect(source_db.admin_url, autocommit=True) as admin:
        admin.execute("CREATE TABLE public.late (x int)")
        admin.execute("GRANT SELECT ON public.late TO app")
        try:
            assert sql(client, "SELECT count(*) FROM src.public.late")["rows"] == [[0]]
        finally:
            admin.execute("DROP TABLE public.late")


def test_connector_statements_in_sql(client, source_db) -> None:
    statement = (
        f"CREATE CONNECTOR pg_sql TYPE postgres WITH (url = '{source_db.url}',"
        f" secret_ref = '$env:{SECRET_ENV}', pool_size = 2, include_schemas = 'billing')"
    )
    assert sql(client, statement)["status"] == "CREATE CONNECTOR"
    shown = sql(client, "SHOW CONNECTORS")
    assert [c["name"] for c in shown["columns"]][:5] == ["id", "name", "type", "mode", "state"]
    assert shown["rows"][0][1:5] == ["pg_sql", "postgres", "federation", "ready"]
    assert sql(client, "SELECT count(*) FROM pg_sql.billing.invoices")["rows"] == [[20]]
    assert sql(client, "REFRESH CONNECTOR pg_sql")["status"] == "REFRESH CONNECTOR"
    bad = sql(client, "CREATE CONNECTOR x TYPE postgres WITH (colour = 'red')", 400)
    assert "unknown connector option 'colour'" in bad["message"]
    assert sql(client, "DROP CONNECTOR pg_sql")["status"] == "DROP CONNECTOR"
    assert sql(client, "DROP CONNECTOR IF EXISTS pg_sql")["status"] == "DROP CONNECTOR"
    assert sql(client, "SHOW CONNECTORS")["rows"] == []


# ---------------------------------------------------------------- failure modes


def test_unreachable_source_is_502_and_shows_in_status(client, source_db) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = f"postgresql://app@127.0.0.1:{port}/fed"
    created = create(client, body(source_db, url=closed))
    assert created["state"] == "error" and "source unreachable" in created["last_error"]
    answer = sql(client, "SELECT * FROM src.public.items", 502)
    assert answer["error"] == "source_unreachable" and answer["retryable"] is True
    assert client.get("/v1/connectors/src/status").get_json()["state"] == "error"


def test_pool_exhausted_is_503_and_visible_in_status(client, services, source_db) -> None:
    create(client, body(source_db, pool_size=1, pool_timeout_seconds=0.2))
    connector = services.connectors.connector("src")
    with connector.pool.connection():
        answer = sql(client, "SELECT count(*) FROM src.public.items", 503)
        status = client.get("/v1/connectors/src/status").get_json()
    assert answer["error"] == "pool_exhausted" and "pool_size" in answer["message"]
    assert status["pool"]["in_use"] == 1 and status["pool"]["size"] == 1
    assert status["pool"]["exhausted_total"] == 1
    assert "stayed busy" in status["last_error"]
    assert sql(client, "SELECT count(*) FROM src.public.items")["rows"] == [[300]]


def test_sql_the_source_rejects_is_pushdown_failed_and_logged(client, source_db, caplog) -> None:
    create(client, body(source_db))
    with caplog.at_level(logging.ERROR, logger="kyma.connectors"):
        answer = sql(client, "SELECT id FROM src.public.items WHERE name + 1 > 0", 500)
    assert answer["error"] == "pushdown_failed"
    assert "operator does not exist: text + integer" in answer["message"]
    (record,) = [r for r in caplog.records if "pushdown failed" in r.getMessage()]
    assert "pushed SQL: SELECT" in record.getMessage() and "residual: []" in record.getMessage()
    assert sql(client, "SELECT count(*) FROM src.public.items")["rows"] == [[300]]


def test_tls_handshake_failure_disables_the_connector(client, pg_server_url) -> None:
    """The catalog's Postgres has no TLS: a connector that requires it is disabled."""
    url = "postgresql://kyma@" + pg_server_url.split("@", 1)[1]
    created = create(client, {"name": "notls", "type": "postgres", "connection": {"url": url}})
    assert created["state"] == "disabled"
    assert created["disabled_reason"].startswith("tls_failed: ")
    assert "SSL" in created["disabled_reason"]
    answer = sql(client, "SELECT 1 FROM notls.public.x", 503)
    assert answer["error"] == "connector_disabled" and "tls_failed" in answer["message"]
    again = client.post("/v1/connectors/notls/enable").get_json()
    assert again["state"] == "disabled"  # still no TLS there: disabled again, not silently on


def test_tls_disabled_needs_an_explicit_override(client, source_db) -> None:
    refused = create(client, body(source_db, tls="disabled"), 400)
    assert refused["message"].startswith(
        "connection.allow_insecure: connection.tls is 'disabled'; add \"allow_insecure\": true"
    )
    assert client.get("/v1/connectors").get_json() == {"connectors": []}
    allowed = create(client, body(source_db, name="insecure", tls="disabled", allow_insecure=True))
    assert allowed["state"] == "ready" and allowed["last_error"].startswith("WARNING")
    assert allowed["reachable"] is True
    assert sql(client, "SELECT count(*) FROM insecure.public.users")["rows"] == [[50]]


# ---------------------------------------------------------------- secrets


def test_secrets_never_leak(client, source_db, secret, monkeypatch, caplog) -> None:
    """Not in definitions, status, answers, summaries, errors or logs; right or wrong."""
    caplog.set_level(logging.DEBUG)
    seen = [json.dumps(create(client, body(source_db)))]
    seen.append(json.dumps(client.get("/v1/connectors").get_json()))
    seen.append(json.dumps(client.get("/v1/connectors/src/status").get_json()))
    seen.append(json.dumps(sql(client, "SELECT * FROM src.public.users WHERE id < 3")))
    seen.append(json.dumps(sql(client, "EXPLAIN SELECT * FROM src.public.users")))
    wrong = secret[::-1] + "x"
    monkeypatch.setenv(SECRET_ENV, wrong)
    failed = create(client, body(source_db, name="wrong"))
    assert failed["state"] == "error" and "password authentication failed" in failed["last_error"]
    seen.append(json.dumps(failed))
    seen.append(json.dumps(sql(client, "SELECT * FROM wrong.public.users", 502)))
    monkeypatch.delenv(SECRET_ENV)
    missing = sql(client, "SELECT * FROM src.public.users", 200)  # the live connector stays
    seen.append(json.dumps(missing))
    seen.append(caplog.text)
    for text in seen:
        assert secret not in text and wrong not in text
    assert source_db.url.split("@")[1].split("/")[0] not in json.dumps(missing["pushdown_summary"])


def test_secret_ref_that_resolves_to_nothing_is_a_config_error(
    client, source_db, monkeypatch
) -> None:
    monkeypatch.delenv(SECRET_ENV)
    created = create(client, body(source_db))
    assert created["state"] == "error"
    answer = sql(client, "SELECT 1 FROM src.public.users", 400)
    assert answer["message"] == (
        f"secret_ref '$env:{SECRET_ENV}': the environment variable {SECRET_ENV} is not set"
    )


def test_file_secret_ref(client, services, source_db, monkeypatch) -> None:
    monkeypatch.delenv(SECRET_ENV)
    folder = services.settings.resolved_secrets_dir
    folder.mkdir(parents=True)
    (folder / "pg.password").write_text(source_db.password + "\n")
    payload = body(source_db)
    payload["connection"]["secret_ref"] = "file:pg.password"
    assert create(client, payload)["state"] == "ready"
    assert sql(client, "SELECT count(*) FROM src.public.users")["rows"] == [[50]]
    payload = body(source_db, name="absolute")
    payload["connection"]["secret_ref"] = f"file:{folder / 'pg.password'}"
    assert create(client, payload)["state"] == "ready"
