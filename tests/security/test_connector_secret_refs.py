"""An admin token cannot turn a connector into a way to read host files or variables: refs
outside the allow-listed places are 400s, and a hostile server gets no password."""

from __future__ import annotations

from fake_postgres import FakePostgres
from secure_serve import Secure

from kyma.engine.storage.config import StoreConfig

SECRET = "serve-Sentinel-91c4"


def test_refs_to_host_files_and_variables_are_400(secure: Secure) -> None:
    admin = secure.tokens["admin"]
    for ref in ("file:/etc/shadow", f"file:{secure.serve.home}/catalog.password", "$env:HOME"):
        body = {
            "name": "probe",
            "type": "postgres",
            "connection": {"url": "postgres://a@127.0.0.1:1/x", "secret_ref": ref},
        }
        status, answer, _ = secure.call("/v1/connectors", admin, body=body)
        assert status == 400 and answer["error"] == "config_error", (ref, answer)
        assert answer["message"].startswith(f"connection.secret_ref: {ref!r}")
        secure.assert_healthy()
    status, answer, _ = secure.call("/v1/connectors/probe", admin)
    assert status == 404, answer


def test_a_hostile_server_gets_no_password(secure: Secure) -> None:
    admin = secure.tokens["admin"]
    folder = secure.serve.home / "secrets"
    folder.mkdir(exist_ok=True)
    (folder / "hostile.password").write_text(SECRET)
    with FakePostgres() as fake:
        connection = {
            "url": f"postgresql://app@127.0.0.1:{fake.port}/x",
            "secret_ref": "file:hostile.password",
            "tls": "disabled",
            "allow_insecure": True,
        }
        body = {"name": "hostile", "type": "postgres", "connection": connection}
        try:
            status, created, _ = secure.call("/v1/connectors", admin, body=body)
            assert status == 201 and created["reachable"] is False, created
        finally:
            assert secure.call("/v1/connectors/hostile", admin, method="DELETE")[0] == 204
    assert fake.startups >= 1 and SECRET.encode() not in fake.received
    secure.assert_healthy()


def test_a_store_config_never_prints_its_s3_secret() -> None:
    config = StoreConfig("s3://b/p", "/tmp/c", access_key_id="AKIA1", secret_access_key=SECRET)
    assert SECRET not in repr(config) and SECRET not in str(config)
    assert "AKIA1" in repr(config)  # the rest still says which store it is
