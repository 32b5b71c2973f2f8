"""Secrets come only from the secrets folder or KYMA_SECRET_* variables, and never cross
the network in clear text: a hostile server asking for the password gets nothing."""

from __future__ import annotations

import json

import pytest
from fake_postgres import FakePostgres
from http_helpers import sql

from kyma.connectors.secrets import SecretPolicy
from kyma.engine.errors import ConfigError

SECRET = "s3cret-Sentinel-7d1f"
SECRET_ENV = "KYMA_SECRET_TEST_FAKE"


def connector(url: str, secret_ref: str, **connection) -> dict:  # type: ignore[no-untyped-def]
    return {
        "name": "fake",
        "type": "postgres",
        "connection": {"url": url, "secret_ref": secret_ref, **connection},
    }


@pytest.fixture
def folder(services):  # type: ignore[no-untyped-def]
    """The server's secrets folder, with one secret in it."""
    path = services.settings.resolved_secrets_dir
    path.mkdir(parents=True)
    (path / "fake.password").write_text(SECRET + "\n")
    return path


def test_refs_outside_the_allowed_places_are_400(client, services, folder, monkeypatch) -> None:
    home = services.settings.home
    (home / "catalog.password").write_text("catalog-secret\n")
    (folder / "escape").symlink_to(home / "catalog.password")
    monkeypatch.setenv("KYMA_NOT_A_SECRET", "x")
    refused = {
        "file:/etc/shadow": "outside the secrets folder",
        "file:/etc/hostname": "outside the secrets folder",
        f"file:{home / 'catalog.password'}": "outside the secrets folder",
        "file:../catalog.password": "outside the secrets folder",
        "file:escape": "outside the secrets folder",  # a symlink counts where it leads
        "$env:HOME": "only environment variables named KYMA_SECRET_<NAME>",
        "$env:KYMA_NOT_A_SECRET": "only environment variables named KYMA_SECRET_<NAME>",
    }
    for ref, rule in refused.items():
        answer = client.post("/v1/connectors", json=connector("postgres://a@127.0.0.1/x", ref))
        assert answer.status_code == 400, ref
        body = answer.get_json()
        assert body["error"] == "config_error"
        assert body["message"].startswith(f"connection.secret_ref: {ref!r}")
        assert rule in body["message"]
        assert "catalog-secret" not in json.dumps(body)
    assert client.get("/v1/connectors").get_json() == {"connectors": []}


def test_a_folder_that_holds_the_home_still_never_reads_kymas_files(tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "catalog.password").write_text("catalog-secret")
    (tmp_path / "pg.password").write_text("pg-secret")
    policy = SecretPolicy(tmp_path, home)  # KYMA_SECRETS_DIR set to the home's parent
    assert policy.resolve("file:pg.password") == "pg-secret"
    for ref in ("file:home/catalog.password", f"file:{home}/catalog.password"):
        with pytest.raises(ConfigError, match="one of kyma's own files"):
            policy.resolve(ref)


def test_a_symlink_swapped_in_after_create_is_refused_at_connect(client, folder) -> None:
    """The check runs again whenever kyma connects: the file system may change under it."""
    created = client.post(
        "/v1/connectors", json=connector("postgres://a@127.0.0.1:1/x", "file:later")
    )
    assert created.status_code == 201
    (folder / "later").symlink_to("/etc/hostname")
    answer = sql(client, "SELECT 1 FROM fake.public.t", 400)
    assert "outside the secrets folder" in answer["message"]


@pytest.mark.parametrize("ref", ["file:fake.password", f"$env:{SECRET_ENV}"])
def test_a_server_asking_for_a_cleartext_password_gets_none(
    client, folder, monkeypatch, ref
) -> None:
    """tls disabled (allowed): libpq refuses a cleartext or md5 password request."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    with FakePostgres() as fake:
        url = f"postgresql://app@127.0.0.1:{fake.port}/fed"
        payload = connector(url, ref, tls="disabled", allow_insecure=True)
        created = client.post("/v1/connectors", json=payload)
        assert created.status_code == 201
        assert created.get_json()["state"] == "error"
        assert "password" in created.get_json()["last_error"]
        answer = sql(client, "SELECT 1 FROM fake.public.t", 502)
        assert answer["error"] == "source_unreachable"
    assert fake.startups >= 1  # kyma did reach the server and read its request
    assert SECRET.encode() not in fake.received
    assert b"app" in fake.received  # the startup message (user name) is all it got


def test_tls_required_sends_nothing_to_a_server_without_tls(client, folder) -> None:
    with FakePostgres() as fake:
        url = f"postgresql://app@127.0.0.1:{fake.port}/fed"
        created = client.post("/v1/connectors", json=connector(url, "file:fake.password"))
        assert created.status_code == 201
    assert fake.startups == 0 and SECRET.encode() not in fake.received
