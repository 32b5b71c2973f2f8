"""One kyma (services wired as ``kyma serve`` wires them, auth required) with its HTTP app
and a Postgres protocol listener on loopback, plus a database on the oracle Postgres, for
the DML tests of this folder. Tokens: ``admin`` and ``read``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from kyma.auth import new_token, token_hash
from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores


@dataclass
class Kyma:
    services: Any
    client: Any
    pg_url: str
    tokens: dict[str, str]

    def http(self, sql: str, token: str = "admin") -> tuple[int, dict[str, Any]]:
        headers = {"Authorization": f"Bearer {self.tokens[token]}"}
        answer = self.client.post("/v1/query", json={"sql": sql}, headers=headers)
        return answer.status_code, answer.get_json()

    def connect(self, token: str = "admin") -> psycopg.Connection:
        return psycopg.connect(
            self.pg_url, user="kyma", password=self.tokens[token], autocommit=True
        )


@pytest.fixture(scope="module")
def kyma(module_catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kyma]:
    from kyma.pgwire import start_pg_server
    from kyma.server import create_app
    from kyma.services import wire_services
    from kyma.settings import Settings

    home = tmp_path_factory.mktemp("dml")
    stores = Stores.open(module_catalog_url)
    settings = Settings(
        home=home / "home",
        catalog_url=module_catalog_url,
        block_rows=64,
        auth="required",
        gc_grace_seconds=0,
        snapshot_keep_seconds=0,
        import_dirs=str(home / "imports"),  # read_parquet & co. (test_copy_from.py)
    )
    (home / "imports").mkdir()
    services = wire_services(settings, stores, LocalStore(home / "objects"))
    tokens = {}
    for name, scopes in (("admin", ["admin"]), ("read", ["read"])):
        tokens[name] = new_token()
        stores.tokens.create(token_hash(tokens[name]), scopes, None, name)
    listener = start_pg_server(services, "127.0.0.1", 0)
    try:
        yield Kyma(services, create_app(services).test_client(), listener.url, tokens)
    finally:
        listener.stop()
        services.close()
        stores.close()


@pytest.fixture(scope="module")
def oracle(pg_server_url: str) -> Iterator[psycopg.Connection]:
    """A connection to a fresh database on the real Postgres: the oracle."""
    name = f"oracle_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"{pg_server_url.rpartition('/')[0]}/{name}"
        with psycopg.connect(url, autocommit=True) as conn:
            yield conn
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
