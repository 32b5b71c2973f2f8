"""The console tests' data (a ``logs`` table and one trace) and their HTTP handle on the
server; a module of its own so that tests import it by a name no other folder uses."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait
from serve_helpers import Serve

SERVICES = ("api", "billing", "search")
LEVELS = ("info", "warn", "error")
TRACE_ID = "5b8efff798038103d269b633813fc60c"
NOW = datetime.now(UTC).replace(microsecond=0)


def log_rows() -> list[dict[str, Any]]:
    rows = []
    for n in range(300):
        at = NOW - timedelta(minutes=50) + timedelta(seconds=10 * n)
        word = "timeout" if n % 7 == 0 else "ok"
        rows.append(
            {
                "_timestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "n": n,
                "service": SERVICES[n % 3],
                "level": LEVELS[(n // 3) % 3] if n % 5 else "error",
                "body": f"request {n} finished {word}",
                "attributes": {"http.status": 500 if n % 7 == 0 else 200, "route": f"/r{n % 4}"},
            }
        )
    return rows


def spans() -> dict:
    start = int(NOW.timestamp() * 1e9)

    def span(span_id: str, parent: str, name: str, offset_ms: int, ms: int) -> dict:
        return {
            "traceId": TRACE_ID,
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "kind": 2,
            "startTimeUnixNano": str(start + offset_ms * 1_000_000),
            "endTimeUnixNano": str(start + (offset_ms + ms) * 1_000_000),
        }

    spans = [
        span("eee19b7ec3c1b174", "", "GET /checkout", 0, 100),
        span("eee19b7ec3c1b175", "eee19b7ec3c1b174", "SELECT orders", 10, 30),
        span("eee19b7ec3c1b176", "eee19b7ec3c1b174", "POST /charge", 50, 40),
    ]
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}


@dataclass
class Console:
    serve: Serve
    token: str
    source_url: str  # the test Postgres, for a connector (its password in KYMA_SECRET_ORACLE)

    @property
    def url(self) -> str:
        return f"{self.serve.url}/console/"

    def call(self, path: str, body: Any = None, method: str | None = None, url: str = "") -> Any:
        """The JSON answer of ``path`` with the admin token (NDJSON when ``body`` is a list)."""
        data = None
        if isinstance(body, list):
            data = "".join(json.dumps(r) + "\n" for r in body).encode()
        elif body is not None:
            data = json.dumps(body).encode()
        request = urllib.request.Request(
            (url or self.serve.url) + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                text = answer.read()
        except urllib.error.HTTPError as e:
            with e:
                raise AssertionError(f"{path}: {e.code} {e.read()!r}") from None
        return json.loads(text) if text else None

    def sql(self, text: str) -> dict:
        return self.call("/v1/query", {"sql": text})


def wait(driver: webdriver.Chrome, seconds: float = 15) -> WebDriverWait:
    return WebDriverWait(driver, seconds, poll_frequency=0.05)
