"""The secured ``kyma serve`` the security tests share, and ``kyma`` CLI runs on its home."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from secure_client import call
from serve_helpers import Serve
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


def kyma(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kyma ARGS`` against the catalog of the serve on ``home``."""
    return subprocess.run(
        [sys.executable, "-m", "kyma", *args],
        env={**os.environ, "KYMA_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
