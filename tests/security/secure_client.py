"""HTTP requests to a ``kyma serve`` with a token and a TLS context; the answer, errors too."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any


def call(
    url: str,
    *,
    token: str | None = None,
    body: bytes | dict | None = None,
    method: str | None = None,
    context: ssl.SSLContext | None = None,
    raw: bool = False,
) -> tuple[int, Any, dict[str, str]]:
    """(status, JSON answer, headers by lower-case name) of one request; ``raw`` sends
    protobuf and answers the body's bytes."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    headers = {"Content-Type": "application/x-protobuf" if raw else "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as answer:
            return answer.status, _body(answer.read(), raw), _lower(answer.headers)
    except urllib.error.HTTPError as e:
        with e:
            return e.code, _body(e.read(), raw), _lower(e.headers)


def _lower(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def _body(data: bytes, raw: bool) -> Any:
    return data if raw else json.loads(data or b"{}")
