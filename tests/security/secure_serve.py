"""The secured ``kyma serve`` the security tests share, and ``kyma`` CLI runs on its home."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from secure_client import call
from serve_helpers import Serve, kyma
from tls_ca import TlsFiles


@dataclass
class Secure:
    serve: Serve
    tls: TlsFiles
    context: ssl.SSLContext  # trusts the test CA
    tokens: dict[str, str]
    token_ids: dict[str, int]

    def call(self, path: str, token: str | None = None, **kw):  # type: ignore[no-untyped-def]
        return call(f"{self.serve.url}{path}", token=token, context=self.context, **kw)

    def sql(self, text: str, token: str | None):  # type: ignore[no-untyped-def]
        return self.call("/v1/query", token, body={"sql": text})


__all__ = ["Secure", "kyma"]
