"""One real ``kyma serve`` with auth required and TLS on every listener, for every test here.

Tokens: ``admin`` made with the CLI (how an operator starts), the others over REST with it;
``revoked`` is revoked with the CLI. Tables ``logs`` and ``secrets`` hold a row each.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from secure_serve import Secure, kyma, secure_serve
from serve_helpers import free_port

GRANTS = {
    "read_logs": {"scopes": ["read"], "tables": ["logs"]},
    "ingest_logs": {"scopes": ["ingest"], "tables": ["logs", "otel_logs"]},
    "read": {"scopes": ["read"]},
    "revoked": {"scopes": ["read", "ingest"]},
}


@pytest.fixture(scope="session")
def secure() -> Iterator[Secure]:
    with secure_serve(
        GRANTS,
        ("logs", "secrets"),
        KYMA_OTLP_BATCH_LATENCY_MS="20",
        KYMA_PG_PORT=str(free_port()),
    ) as secure:
        revoked = kyma(secure.serve.home, "token", "revoke", str(secure.token_ids["revoked"]))
        assert revoked.returncode == 0, revoked.stderr
        yield secure
