"""A secured ``kyma serve`` (auth required, TLS on every listener) with tokens and tables,
and ``kyma`` CLI runs on its home."""

from __future__ import annotations

import re
import shutil
import ssl
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.flight as flight
from adbc_driver_flightsql import DatabaseOptions
from adbc_driver_flightsql.dbapi import connect
from secure_client import call
from serve_helpers import Serve, kyma
from tls_ca import TlsFiles, make_ca_and_server_cert


@dataclass
class Secure:
    serve: Serve
    tls: TlsFiles
    context: ssl.SSLContext  # trusts the test CA
    tokens: dict[str, str]
    token_ids: dict[str, int]

    def call(self, path: str, token: str | None = None, **kw):  # type: ignore[no-untyped-def]
        return call(f"{self.serve.url}{path}", token=token, context=self.context, **kw)

    def assert_healthy(self) -> None:
        """The server is up and answers /healthz within a second."""
        assert self.serve.proc.poll() is None, "".join(self.serve.output[-40:])
        started = time.monotonic()
        assert self.call("/healthz")[0] == 200
        assert time.monotonic() - started < 1

    def sql(self, text: str, token: str | None):  # type: ignore[no-untyped-def]
        return self.call("/v1/query", token, body={"sql": text})

    def adbc(self, token: str | None):  # type: ignore[no-untyped-def]
        """An ADBC Flight SQL connection, sending ``token`` when given."""
        options = {DatabaseOptions.TLS_ROOT_CERTS.value: self.tls.ca.read_text()}
        if token:
            options[DatabaseOptions.AUTHORIZATION_HEADER.value] = f"Bearer {token}"
        return connect(self.serve.flight_url, db_kwargs=options, autocommit=True)

    def flight(self, token: str | None) -> tuple[flight.FlightClient, flight.FlightCallOptions]:
        """A plain Flight client, and the call options that send ``token`` when given."""
        client = flight.FlightClient(self.serve.flight_url, tls_root_certs=self.tls.ca.read_bytes())
        headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
        return client, flight.FlightCallOptions(headers=headers, timeout=30)


@contextmanager
def secure_serve(
    grants: dict[str, dict[str, Any]], tables: tuple[str, ...], **env: str
) -> Iterator[Secure]:
    """A serve with token ``admin`` made with the CLI (how an operator starts), the tokens
    ``grants`` names made over REST with it, and ``tables`` holding a row each (``msg``)."""
    home = Path(tempfile.mkdtemp(prefix="kyma-security-", dir="/tmp"))  # postgres reaches it
    tls = make_ca_and_server_cert(home)
    serve = Serve(
        home,
        KYMA_AUTH="required",
        KYMA_TLS_CERT_FILE=str(tls.cert),
        KYMA_TLS_KEY_FILE=str(tls.key),
        **env,
    )
    try:
        created = kyma(home, "token", "create", "--scope", "admin", "--name", "bootstrap")
        assert created.returncode == 0, created.stderr
        admin = created.stdout.strip()
        assert re.fullmatch(r"kyma_[A-Za-z0-9_-]{43}", admin), created.stdout
        context = ssl.create_default_context(cafile=str(tls.ca))
        secure = Secure(serve, tls, context, {"admin": admin}, {})
        for name, grant in grants.items():
            status, answer, _ = secure.call("/v1/tokens", admin, body={**grant, "name": name})
            assert status == 201, answer
            secure.tokens[name], secure.token_ids[name] = answer["token"], answer["id"]
        for table in tables:
            status, answer, _ = secure.sql(f"CREATE TABLE {table} (msg string)", admin)
            assert status == 200, answer
            status, answer, _ = secure.call(
                f"/v1/ingest/{table}", admin, body=f'{{"msg": "{table} row"}}'.encode()
            )
            assert status == 200, answer
        yield secure
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)
