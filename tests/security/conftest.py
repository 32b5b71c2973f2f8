"""One real ``kyma serve`` with auth required and TLS on every listener, for every test here.

Tokens: ``admin`` made with the CLI (how an operator starts), the others over REST with it;
``revoked`` is revoked with the CLI. Tables ``logs`` and ``secrets`` hold a row each.
"""

from __future__ import annotations

import re
import shutil
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from secure_serve import Secure, kyma
from serve_helpers import Serve, free_port
from tls_ca import make_ca_and_server_cert


@pytest.fixture(scope="session")
def secure() -> Iterator[Secure]:
    home = Path(tempfile.mkdtemp(prefix="kyma-security-", dir="/tmp"))  # postgres reaches it
    tls = make_ca_and_server_cert(home)
    serve = Serve(
        home,
        KYMA_AUTH="required",
        KYMA_TLS_CERT_FILE=str(tls.cert),
        KYMA_TLS_KEY_FILE=str(tls.key),
        KYMA_OTLP_BATCH_LATENCY_MS="20",
        KYMA_PG_PORT=str(free_port()),
    )
    try:
        created = kyma(home, "token", "create", "--scope", "admin", "--name", "bootstrap")
        assert created.returncode == 0, created.stderr
        admin = created.stdout.strip()
        assert re.fullmatch(r"kyma_[A-Za-z0-9_-]{43}", admin), created.stdout
        context = ssl.create_default_context(cafile=str(tls.ca))
        secure = Secure(serve, tls, context, {"admin": admin}, {})
        grants = {
            "read_logs": {"scopes": ["read"], "tables": ["logs"]},
            "ingest_logs": {"scopes": ["ingest"], "tables": ["logs", "otel_logs"]},
            "read": {"scopes": ["read"]},
            "revoked": {"scopes": ["read", "ingest"]},
        }
        for name, grant in grants.items():
            status, answer, _ = secure.call("/v1/tokens", admin, body={**grant, "name": name})
            assert status == 201, answer
            secure.tokens[name], secure.token_ids[name] = answer["token"], answer["id"]
        revoked = kyma(home, "token", "revoke", str(secure.token_ids["revoked"]))
        assert revoked.returncode == 0, revoked.stderr
        for table in ("logs", "secrets"):
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
