"""One real ``kyma serve`` (auth required) and one headless Chromium for every console test.

The server holds table ``logs`` (300 rows over the last 50 minutes, services and levels for
facets, every seventh a timeout) and the spans of one trace ingested through OTLP/HTTP. A
failing test leaves a screenshot and the page's HTML in a temporary folder named in its
report.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, screenshot
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
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


def _spans() -> dict:
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
            raise AssertionError(f"{path}: {e.code} {e.read()!r}") from None
        return json.loads(text) if text else None

    def sql(self, text: str) -> dict:
        return self.call("/v1/query", {"sql": text})


@pytest.fixture(scope="module")
def console(
    module_catalog_url: str, pg_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Console]:
    home: Path = tmp_path_factory.mktemp("console") / "home"
    source = urllib.parse.urlsplit(pg_server_url)
    netloc = f"{source.username}@{source.hostname}:{source.port}"
    serve = Serve(
        home,
        KYMA_SECRET_ORACLE=source.password or "",
        KYMA_CATALOG_URL=module_catalog_url,
        KYMA_AUTH="required",
        KYMA_QUERY_MEMORY_BYTES="0",  # the cancelled statement runs until it is stopped
        KYMA_OTLP_BATCH_LATENCY_MS="10",
    )
    try:
        token = re.search(r"first token\s+(kyma_\S+)", serve.printed())
        assert token, serve.printed()
        console = Console(serve, token.group(1), source._replace(netloc=netloc).geturl())
        console.sql(
            "CREATE TABLE logs (n long, service string, level string, body string,"
            " attributes dynamic)"
        )
        assert console.call("/v1/ingest/logs", log_rows())["rows"] == 300
        console.call("/v1/traces", _spans(), url=serve.otlp_http_url)
        yield console
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, serve.printed()[-4000:]
    assert "Traceback" not in serve.printed(), serve.printed()[-4000:]


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def page(browser: webdriver.Chrome, console: Console) -> webdriver.Chrome:
    """The console open and signed in (the token in the page's storage)."""
    browser.get(console.url)
    browser.execute_script("localStorage.setItem('kyma.token', arguments[0])", console.token)
    browser.get(console.url + "#/sql")
    browser.refresh()
    wait(browser).until(ec.presence_of_element_located((By.ID, "nav-sql")))
    return browser


def wait(driver: webdriver.Chrome, seconds: float = 15) -> WebDriverWait:
    return WebDriverWait(driver, seconds, poll_frequency=0.05)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    driver = item.funcargs.get("browser") or item.funcargs.get("page")  # type: ignore[attr-defined]
    if report.when == "call" and report.failed and driver is not None:
        path = screenshot(driver, item.name)
        report.sections.append(("console screenshot", f"screenshot and page HTML: {path}"))
