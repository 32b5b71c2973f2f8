"""Connector set-up without traps: precise 400s, reachability in the create answer, and
edits (PATCH and ALTER CONNECTOR) checked like a create, on a fresh pool."""

from __future__ import annotations

import socket
import time

import pytest
from http_helpers import sql

from kyma.connectors.spec import check_change, parse_spec
from kyma.engine.errors import ConfigError

SECRET_ENV = "KYMA_SECRET_TEST_SETUP"


@pytest.fixture(autouse=True)
def secret(source_db, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(SECRET_ENV, source_db.password)
    return source_db.password


def definition(url: str, name: str = "src", **connection) -> dict:  # type: ignore[no-untyped-def]
    return {
        "name": name,
        "type": "postgres",
        "connection": {"url": url, "secret_ref": f"$env:{SECRET_ENV}", **connection},
    }


def patch(client, key: str, body: object, status: int = 200) -> dict:  # type: ignore[no-untyped-def]
    answer = client.patch(f"/v1/connectors/{key}", json=body)
    assert answer.status_code == status, answer.get_json()
    return answer.get_json()


def closed_port() -> int:
    with socket.socket() as probe:  # nothing listens on it once the probe closes
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_create_says_whether_the_source_is_reachable(client, source_db) -> None:
    started = time.monotonic()
    url = f"postgresql://app@127.0.0.1:{closed_port()}/fed"
    answer = client.post("/v1/connectors", json=definition(url, connect_timeout_seconds=2))
    assert answer.status_code == 201
    created = answer.get_json()
    assert created["reachable"] is False and created["state"] == "error"
    assert (
        "source unreachable" in created["last_error"]
        and "Connection refused" in created["last_error"]
    )
    assert time.monotonic() - started < 5
    ready = client.post("/v1/connectors", json=definition(source_db.url, "ok")).get_json()
    assert ready["reachable"] is True and ready["state"] == "ready" and ready["last_error"] is None


def test_patch_edits_checks_and_restarts_the_pool(client, services, source_db) -> None:
    client.post("/v1/connectors", json=definition(source_db.url, pool_size=2))
    before = services.connectors.connector("src")
    edited = patch(
        client, "src", {"connection": {"pool_size": 3}, "scope": {"include_schemas": ["billing"]}}
    )
    assert edited["reachable"] is True and edited["connection"]["pool_size"] == 3
    assert edited["scope"]["include_schemas"] == ["billing"]
    assert services.connectors.connector("src") is not before  # a fresh pool
    assert client.get("/v1/connectors/src/status").get_json()["pool"]["size"] == 3
    assert sql(client, "SELECT count(*) FROM src.billing.invoices")["rows"] == [[20]]
    assert sql(client, "SELECT count(*) FROM src.public.users", 404)["error"] == "not_found_error"
    # null puts a field back to its default
    assert (
        patch(client, "src", {"scope": {"include_schemas": None}})["scope"]["include_schemas"] == []
    )
    assert sql(client, "SELECT count(*) FROM src.public.users")["rows"] == [[50]]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"connection": {"pool_size": 0}}, "connection.pool_size: expected an integer"),
        ({"connection": {"tls": "disabled"}}, "connection.allow_insecure: connection.tls is"),
        ({"connection": {"secret_ref": "$env:HOME"}}, "connection.secret_ref: '$env:HOME'"),
        ({"connection": {"secret_ref": "file:/etc/shadow"}}, "outside the secrets folder"),
        ({"name": "other"}, "name: a connector's name cannot change"),
        ({"mode": "sync", "sync": {"tables": ["public.items"]}}, "mode: cannot change"),
        ({"colour": "red"}, "colour: unknown field"),
        (["not", "an", "object"], "body: expected a JSON object"),
    ],
)
def test_a_bad_patch_is_400_and_changes_nothing(client, source_db, body, message) -> None:
    created = client.post("/v1/connectors", json=definition(source_db.url)).get_json()
    answer = patch(client, "src", body, 400)
    assert answer["error"] == "config_error" and message in answer["message"]
    created.pop("reachable")
    assert client.get("/v1/connectors/src").get_json() == created
    assert sql(client, "SELECT count(*) FROM src.public.users")["rows"] == [[50]]


def test_patch_of_an_unknown_connector_is_404(client) -> None:
    assert client.patch("/v1/connectors/nosuch", json={}).status_code == 404


def test_a_patch_that_breaks_the_connection_says_so_and_a_second_one_fixes_it(
    client, source_db, monkeypatch
) -> None:
    client.post("/v1/connectors", json=definition(source_db.url))
    monkeypatch.setenv("KYMA_SECRET_TEST_WRONG", "not-the-password")
    broken = patch(client, "src", {"connection": {"secret_ref": "$env:KYMA_SECRET_TEST_WRONG"}})
    assert broken["reachable"] is False and "password authentication failed" in broken["last_error"]
    assert sql(client, "SELECT 1 FROM src.public.users", 502)["error"] == "source_unreachable"
    fixed = patch(client, "src", {"connection": {"secret_ref": f"$env:{SECRET_ENV}"}})
    assert fixed["reachable"] is True and fixed["state"] == "ready" and fixed["last_error"] is None


def test_alter_connector_in_sql(client, source_db) -> None:
    client.post("/v1/connectors", json=definition(source_db.url))
    done = sql(client, "ALTER CONNECTOR src WITH (pool_size = 5, include_schemas = 'billing')")
    assert done["status"] == "ALTER CONNECTOR"
    shown = client.get("/v1/connectors/src").get_json()
    assert shown["connection"]["pool_size"] == 5 and shown["scope"]["include_schemas"] == [
        "billing"
    ]
    assert sql(client, "SELECT count(*) FROM src.billing.invoices")["rows"] == [[20]]
    bad = sql(client, "ALTER CONNECTOR src WITH (tls = 'disabled')", 400)
    assert bad["message"].startswith("connection.allow_insecure:")
    assert "ALTER CONNECTOR <name> WITH" in sql(client, "ALTER CONNECTOR src", 400)["message"]
    missing = sql(client, "ALTER CONNECTOR nosuch WITH (pool_size = 2)", 404)
    assert missing["error"] == "not_found_error"


def test_enable_of_a_stored_insecure_definition_names_the_fix(client, services, source_db) -> None:
    """A definition an older kyma stored (tls disabled, no override) is not silently kept."""
    legacy = definition(source_db.url, "legacy", tls="disabled")
    record = services.stores.connectors.create("legacy", "postgres", legacy)
    services.stores.connectors.set_state(
        record.connector_id, disabled_reason="tls_disabled: …", last_error=None
    )
    answer = client.post("/v1/connectors/legacy/enable")
    assert answer.status_code == 400
    assert answer.get_json()["message"].startswith("connection.allow_insecure:")
    assert answer.get_json()["message"].endswith("change it with PATCH /v1/connectors/legacy")
    fixed = patch(client, "legacy", {"connection": {"allow_insecure": True}})
    assert fixed["state"] == "ready" and fixed["disabled_reason"] is None, fixed


def test_what_a_syncing_connector_cannot_change() -> None:
    def spec(**change):  # type: ignore[no-untyped-def]
        body = {
            "name": "cdc",
            "type": "postgres",
            "mode": "sync",
            "connection": {"url": "postgres://app@db:5432/app"},
            "sync": {"tables": ["public.a"], "schedule_ms": None},
        }
        for key, value in change.items():
            body[key] = {**body[key], **value} if isinstance(value, dict) else value
        return parse_spec(body)

    check_change(spec(), spec(connection={"pool_size": 9, "url": "postgres://other@db:5432/app"}))
    check_change(spec(), spec(sync={"schedule_ms": 500}))
    refused = {
        "sync.tables: cannot change while the connector syncs": spec(sync={"tables": ["public.b"]}),
        "connection.url: a syncing connector cannot move": spec(
            connection={"url": "postgres://app@db:5432/elsewhere"}
        ),
        "mode: cannot change from 'sync' to 'both'": spec(mode="both"),
    }
    for message, edited in refused.items():
        with pytest.raises(ConfigError, match=message):
            check_change(spec(), edited)
