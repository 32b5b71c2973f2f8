"""One real ``kyma serve`` (auth required) and one headless Chromium for every console test.

The server holds table ``logs`` (300 rows over the last 50 minutes, services and levels for
facets, every seventh a timeout), the spans of one trace ingested through OTLP/HTTP, and
connector ``oracle`` on the test Postgres, whose schema ``console_src`` holds ``accounts``
(``id`` 0–299, the ``n`` of ``logs``). A
failing test leaves a screenshot and the page's HTML in a temporary folder named in its
report.
"""

from __future__ import annotations

import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from browser import chromium, screenshot
from console_site import Console, log_rows, spans, wait
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from serve_helpers import Serve

ACCOUNTS = """
DROP SCHEMA IF EXISTS console_src CASCADE;
CREATE SCHEMA console_src;
CREATE TABLE console_src.accounts (id bigint PRIMARY KEY, owner text);
INSERT INTO console_src.accounts SELECT g, 'owner ' || g FROM generate_series(0, 299) AS g;
"""


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
        console.call("/v1/traces", spans(), url=serve.otlp_http_url)
        with psycopg.connect(pg_server_url, autocommit=True) as source_db:
            source_db.execute(ACCOUNTS)
        connection = {
            "url": console.source_url,
            "secret_ref": "$env:KYMA_SECRET_ORACLE",
            "tls": "disabled",
            "allow_insecure": True,  # the loopback test Postgres has no TLS
        }
        scope = {"include_schemas": ["console_src"]}
        console.call(
            "/v1/connectors",
            {"name": "oracle", "type": "postgres", "connection": connection, "scope": scope},
        )
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    driver = item.funcargs.get("browser") or item.funcargs.get("page")  # type: ignore[attr-defined]
    if report.when == "call" and report.failed and driver is not None:
        path = screenshot(driver, item.name)
        report.sections.append(("console screenshot", f"screenshot and page HTML: {path}"))
