"""The web console in a real headless Chromium against a real ``kyma serve`` (conftest.py),
and its live tail endpoint read directly."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from console_site import TRACE_ID, Console, log_rows, wait
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select


def _find(driver: webdriver.Chrome, css: str):  # type: ignore[no-untyped-def]
    return wait(driver).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def _text(driver: webdriver.Chrome, css: str, expected: str, seconds: float = 15) -> str:
    """The text of ``css`` once it holds ``expected``."""
    wait(driver, seconds).until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), expected))
    return driver.find_element(By.CSS_SELECTOR, css).text


def _type_sql(driver: webdriver.Chrome, sql: str) -> None:
    editor = _find(driver, "#sql-editor .cm-content")
    editor.click()
    editor.send_keys(Keys.CONTROL, "a")
    editor.send_keys(Keys.DELETE)
    editor.send_keys(sql)
    editor.send_keys(Keys.ESCAPE)  # close the completion list


def test_sign_in_asks_for_a_token_and_refuses_a_wrong_one(
    browser: webdriver.Chrome, console: Console
) -> None:
    browser.get(console.url)
    browser.execute_script("localStorage.clear()")
    browser.refresh()
    token = _find(browser, "#signin-token")
    token.send_keys("kyma_not_a_token")
    browser.find_element(By.ID, "signin-submit").click()
    _text(browser, "#signin-error", "refused")
    token.clear()
    token.send_keys(console.token)
    browser.find_element(By.ID, "signin-submit").click()
    _find(browser, "#nav-sql")
    assert browser.execute_script("return localStorage.getItem('kyma.token')") == console.token


def test_the_page_needs_no_token_and_the_api_still_does(console: Console) -> None:
    with urllib.request.urlopen(console.url, timeout=10) as answer:
        page = answer.read().decode()
    assert answer.status == 200 and '<script type="module" src="console.js">' in page
    assert "http://" not in page and "https://" not in page  # nothing from a CDN
    for path in ("/v1/tables", "/v1/tables/logs/tail"):
        try:
            urllib.request.urlopen(console.serve.url + path, timeout=10)
            raise AssertionError(f"{path} answered without a token")
        except urllib.error.HTTPError as e:
            with e:
                assert e.code == 401, path


def test_run_a_query_and_see_its_rows(page: webdriver.Chrome) -> None:
    _type_sql(page, "SELECT n, service FROM logs WHERE n < 4 ORDER BY n")
    page.find_element(By.ID, "sql-run").click()
    _text(page, "#sql-status", "4 rows")
    cells = page.find_elements(By.CSS_SELECTOR, "#sql-results .grid-row .grid-cell")
    assert [c.text for c in cells] == ["0", "api", "1", "billing", "2", "search", "3", "api"]
    history = _find(page, "#sql-history li code").text
    assert history == "SELECT n, service FROM logs WHERE n < 4 ORDER BY n"


def test_a_chart_from_a_result(page: webdriver.Chrome, console: Console) -> None:
    sql = (
        "SELECT date_bin(INTERVAL '10 minutes', _timestamp, TIMESTAMP '1970-01-01 00:00:00')"
        " AS t, count(*) AS n, max(n) AS top FROM logs WHERE n < 300 GROUP BY 1 ORDER BY 1"
    )
    buckets = len(console.sql(sql)["rows"])
    _type_sql(page, sql)
    page.find_element(By.ID, "sql-run").click()
    _text(page, "#sql-status", f"{buckets} rows")
    page.find_element(By.ID, "sql-chart-button").click()
    chart = _find(page, "#sql-chart")
    assert chart.get_attribute("data-points") == str(buckets) and buckets >= 5
    assert chart.get_attribute("data-series") == "2"
    assert chart.find_element(By.TAG_NAME, "canvas").size["height"] > 100


def test_a_result_downloads_as_parquet(
    page: webdriver.Chrome, console: Console, tmp_path: Path
) -> None:
    page.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}
    )
    sql = "SELECT n, service, attributes, _timestamp FROM logs WHERE n < 5 ORDER BY n"
    _type_sql(page, sql)
    page.find_element(By.ID, "sql-run").click()
    _text(page, "#sql-status", "5 rows")
    page.find_element(By.ID, "sql-parquet").click()
    _text(page, "#sql-status", "result.parquet downloaded")
    file = tmp_path / "result.parquet"
    wait(page).until(lambda _: file.exists() and not list(tmp_path.glob("*.crdownload")))
    table = pq.read_table(file)
    assert table.column_names == ["n", "service", "attributes", "_timestamp"]
    assert pa.types.is_int64(table.schema.field("n").type)
    assert pa.types.is_timestamp(table.schema.field("_timestamp").type)
    assert table.column("n").to_pylist() == [0, 1, 2, 3, 4]
    assert table.column("service").to_pylist() == [r[1] for r in console.sql(sql)["rows"]]


def test_the_editor_completes_tables(page: webdriver.Chrome) -> None:
    editor = _find(page, "#sql-editor .cm-content")
    editor.click()
    editor.send_keys(Keys.CONTROL, "a")
    editor.send_keys("SELECT * FROM lo")
    options = _find(page, ".cm-tooltip-autocomplete")
    assert "logs" in options.text.split()
    editor.send_keys(Keys.ESCAPE, Keys.CONTROL, "a")
    editor.send_keys("SELECT attrib")  # dynamic paths, from SHOW PATHS
    wait(page).until(lambda d: "attributes['route']" in _find(d, ".cm-tooltip-autocomplete").text)


def test_cancel_a_long_query(page: webdriver.Chrome, console: Console) -> None:
    _type_sql(page, "SELECT count(DISTINCT value % 1000003) FROM generate_series(1, 5000000000)")
    page.find_element(By.ID, "sql-run").click()
    wait(page).until(lambda d: console.call("/v1/queries")["queries"])
    page.find_element(By.ID, "sql-cancel").click()
    status = _text(page, "#sql-status", "statement_stopped")
    assert "stopped" in status
    wait(page).until(lambda d: not console.call("/v1/queries")["queries"])


def test_explain_analyze_shows_the_pruning_cascade(page: webdriver.Chrome) -> None:
    _type_sql(page, "SELECT count(*) FROM logs WHERE has_token(body, 'timeout')")
    page.find_element(By.ID, "sql-explain").click()
    pruning = _find(page, "#sql-results .explain .pruning")
    assert pruning.text.startswith("pruning logs")
    stages = [s.text for s in pruning.find_elements(By.CSS_SELECTOR, ".stage")]
    assert stages[:2] == ["stage 1 catalog 1/1 extents", "stage 2 block stats 1/1 blocks"]
    assert stages[2:4] == ["stage 3 token filters 1/1 blocks", "trigram filters 1/1 pages"]
    assert stages[4].startswith("scan 300 rows, ")
    assert page.find_elements(By.CSS_SELECTOR, "#sql-results .explain .plan .tree .node")


def _explore(page: webdriver.Chrome, console: Console, search: str = "") -> None:
    page.get(console.url + "#/explore/logs")
    box = _find(page, "#ex-search")
    if search:
        box.send_keys(search)
        page.find_element(By.ID, "ex-go").click()
    wait(page).until(
        lambda d: d.find_element(By.ID, "ex-status").get_attribute("data-loaded") == search
    )


def test_explorer_histogram_newest_rows_and_facets(
    page: webdriver.Chrome, console: Console
) -> None:
    _explore(page, console)
    histogram = _find(page, "#ex-histogram canvas")
    assert histogram.size["width"] > 200
    assert _find(page, "#ex-histogram").get_attribute("data-rows") == "300"
    rows = page.find_elements(By.CSS_SELECTOR, "#ex-rows > .row > summary")
    assert len(rows) == 50
    assert "request 299 finished" in rows[0].text and "request 250 finished" in rows[49].text
    service = _find(page, "#ex-facets .facet[data-column=service]")
    values = [li.text.split() for li in service.find_elements(By.TAG_NAME, "li")]
    assert sorted(values) == [["api", "100"], ["billing", "100"], ["search", "100"]]
    route = _find(page, "#ex-facets .facet[data-column='attributes.route']")  # a dynamic path
    values = [li.text.split() for li in route.find_elements(By.TAG_NAME, "li")]
    assert values == [["/r0", "75"], ["/r1", "75"], ["/r2", "75"], ["/r3", "75"]]
    rows[0].click()  # expands: the dynamic column as JSON
    detail = _find(page, "#ex-rows .row[open] details.json")
    assert "http.status" in detail.text and "route" in detail.text


def test_a_facet_value_of_a_dynamic_path_filters(page: webdriver.Chrome, console: Console) -> None:
    _explore(page, console)
    route = _find(page, "#ex-facets .facet[data-column='attributes.route']")
    route.find_elements(By.TAG_NAME, "li")[1].click()
    wait(page).until(
        lambda d: (
            d.find_element(By.ID, "ex-status").get_attribute("data-loaded")
            == "attributes.route:/r1"
        )
    )
    assert _find(page, "#ex-histogram").get_attribute("data-rows") == "75"
    rows = page.find_elements(By.CSS_SELECTOR, "#ex-rows > .row > summary")
    assert len(rows) == 50 and all('"route":"/r1"' in r.text for r in rows)


def test_explorer_search_words_and_fields(page: webdriver.Chrome, console: Console) -> None:
    expected = sum(1 for r in log_rows() if "timeout" in r["body"] and r["service"] == "billing")
    _explore(page, console, "timeout service:billing")
    wait(page).until(
        lambda d: d.find_element(By.ID, "ex-histogram").get_attribute("data-rows") == str(expected)
    )
    rows = page.find_elements(By.CSS_SELECTOR, "#ex-rows > .row > summary")
    assert len(rows) == expected
    assert all("timeout" in r.text and "service=billing" in r.text for r in rows)


def test_an_event_opens_its_source_row_through_live(
    page: webdriver.Chrome, console: Console
) -> None:
    page.get(console.url + "#/explore/logs")
    _find(page, "#ex-status[data-loaded]")
    assert not page.find_elements(By.CSS_SELECTOR, "#ex-rows .source-link")
    _find(page, "#ex-source summary").click()
    _find(page, "#ex-source[data-loaded=yes]")
    Select(page.find_element(By.ID, "ex-source-table")).select_by_visible_text(
        "oracle.console_src.accounts"
    )
    Select(page.find_element(By.ID, "ex-source-key")).select_by_visible_text("id")
    Select(page.find_element(By.ID, "ex-source-field")).select_by_visible_text("n")
    _find(page, "#ex-status[data-loaded]")
    first = _find(page, "#ex-rows details .source-link")
    newest = console.sql("SELECT max(n) FROM logs")["rows"][0][0]
    sql = f"SELECT * FROM live(oracle.console_src.accounts) WHERE id = {newest}"
    assert first.get_attribute("title") == sql
    first.click()
    _text(page, "#sql-status", "1 rows")
    assert _find(page, "#sql-editor .cm-content").text == sql
    cells = page.find_elements(By.CSS_SELECTOR, "#sql-results .grid-row .grid-cell")
    assert [c.text for c in cells] == [str(newest), f"owner {newest}"]
    page.execute_script("localStorage.removeItem('kyma.sourceLinks')")


def test_live_tail_shows_a_new_row_within_two_seconds(
    page: webdriver.Chrome, console: Console
) -> None:
    _explore(page, console)
    page.find_element(By.ID, "ex-live").click()
    wait(page).until(
        lambda d: d.find_element(By.ID, "ex-rows").get_attribute("data-tail") == "open"
    )
    committed = time.monotonic()
    console.call("/v1/ingest/logs", [{"n": 1000, "service": "api", "body": "fresh tail row"}])
    wait(page, 2).until(
        ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#ex-rows .live-row"), "fresh tail row")
    )
    assert time.monotonic() - committed < 2
    page.find_element(By.ID, "ex-live").click()  # closes the stream


def test_trace_waterfall(page: webdriver.Chrome, console: Console) -> None:
    wait(page, 30).until(lambda d: console.sql("SELECT count(*) FROM otel_traces")["rows"] == [[3]])
    page.get(f"{console.url}#/trace/otel_traces/{TRACE_ID}")
    _find(page, "#trace .waterfall")
    spans = page.find_elements(By.CSS_SELECTOR, "#trace .span")
    names = [s.find_element(By.CSS_SELECTOR, ".span-name").text for s in spans]
    assert names == ["shop · GET /checkout", "shop · SELECT orders", "shop · POST /charge"]
    bars = [s.find_element(By.CSS_SELECTOR, ".span-bar") for s in spans]
    style = [b.get_attribute("style") for b in bars]
    assert "left: 0%" in style[0] and "width: 100%" in style[0]
    assert "left: 10%" in style[1] and "width: 30%" in style[1]
    assert "left: 50%" in style[2] and "width: 40%" in style[2]


def test_catalog_and_connectors_pages(page: webdriver.Chrome, console: Console) -> None:
    page.get(console.url + "#/catalog")
    logs = _find(page, "#catalog-tables tr[data-table=logs]")
    assert logs.text.split()[:2] == [
        "logs",
        str(console.sql("SELECT count(*) FROM logs")["rows"][0][0]),
    ]
    page.get(console.url + "#/operations")
    row = _find(page, "#ops-connectors tr[data-connector=oracle]")
    status = console.call("/v1/connectors/oracle/status")
    assert row.find_element(By.CSS_SELECTOR, ".state").text == status["state"]
    error = status["last_error"] or status["disabled_reason"] or ""
    assert row.find_element(By.CSS_SELECTOR, ".error").text == error
    assert "postgres" in row.text


def test_an_admin_creates_and_revokes_a_token(page: webdriver.Chrome, console: Console) -> None:
    page.get(console.url + "#/tokens")
    _find(page, "#tokens-list tr")
    _find(page, "#token-name").send_keys("grafana-console")
    _find(page, "#token-tables").send_keys("logs")
    page.find_element(By.ID, "token-create").click()
    secret = _find(page, "#token-secret").text
    (made,) = [t for t in console.call("/v1/tokens")["tokens"] if t["name"] == "grafana-console"]
    assert made["scopes"] == ["read"] and made["tables"] == ["logs"] and not made["revoked_at"]
    row = _find(page, f"#tokens-list tr[data-token='{made['id']}']")
    assert "grafana-console" in row.text and "active" in row.text
    # the new read token works, and sees no Tokens page
    page.execute_script("localStorage.setItem('kyma.token', arguments[0])", secret)
    page.refresh()
    _text(page, "#tokens-refused", "admin token")
    assert not page.find_elements(By.ID, "nav-tokens")
    page.execute_script("localStorage.setItem('kyma.token', arguments[0])", console.token)
    page.refresh()
    row = _find(page, f"#tokens-list tr[data-token='{made['id']}']")
    row.find_element(By.CSS_SELECTOR, "button.revoke").click()
    page.switch_to.alert.accept()
    _text(page, f"#tokens-list tr[data-token='{made['id']}'] .state", "revoked")
    (after,) = [t for t in console.call("/v1/tokens")["tokens"] if t["id"] == made["id"]]
    assert after["revoked_at"]


def test_catalog_schema_history_and_rows_per_second(
    page: webdriver.Chrome, console: Console
) -> None:
    console.sql("CREATE TABLE evolving (a long) WITH (schema_evolution = 'typed')")
    console.call("/v1/ingest/evolving", [{"a": 1}, {"a": 2}])
    console.call("/v1/ingest/evolving", [{"a": 3, "b": "x"}])
    console.call("/v1/ingest/evolving", [{"a": "four"}])
    history = console.call("/v1/tables/evolving/history")
    names = [c["name"] for c in history["columns"]]
    assert names.index("a") < names.index("b") < len(names) - 1
    (evolved,) = [c for c in history["columns"] if c["evolved_from"] == "a"]
    assert names[-1] == evolved["name"]
    assert [c["added_rows"] for c in history["commits"]] == [1, 1, 2]
    assert history["rows_per_second"] == round(4 / 60, 3)  # all four within the minute
    page.get(console.url + "#/catalog")
    row = _find(page, "#catalog-tables tr[data-table=evolving]")
    assert row.find_element(By.CSS_SELECTOR, ".rate").text == str(history["rows_per_second"])
    row.find_element(By.CSS_SELECTOR, "button.show-history").click()
    details = _find(page, "#catalog-tables tr[data-history=evolving]")
    shown = details.find_elements(By.CSS_SELECTOR, ".schema-history tbody tr")
    assert [r.get_attribute("data-column") for r in shown] == names
    assert shown[-1].text.endswith("evolved from a")
    commits = details.find_elements(By.CSS_SELECTOR, ".commits tbody tr")
    assert [r.get_attribute("data-snapshot") for r in commits] == [
        str(c["snapshot_id"]) for c in history["commits"]
    ]


# Live tail's endpoint without a browser: one event a commit that appends, none for a
# DELETE, the rows read from the commit's extents; errors before the stream starts.


@contextmanager
def _stream(console: Console, path: str) -> Iterator[http.client.HTTPResponse]:
    url = urllib.parse.urlsplit(console.serve.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {console.token}"})
        yield conn.getresponse()
    finally:
        conn.close()


def _next_event(answer: http.client.HTTPResponse) -> dict:
    fields: dict[str, str] = {}
    for raw in answer:
        line = raw.decode().rstrip("\n")
        if not line and "data" in fields:
            return {**fields, "data": json.loads(fields["data"])}
        if line and not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    raise AssertionError("the stream ended")


def test_each_append_is_one_event_and_deletes_are_none(console: Console) -> None:
    console.sql("CREATE TABLE tailed (n long, word string, attrs dynamic)")
    console.call("/v1/ingest/tailed", [{"n": 1, "word": "before"}])
    with _stream(console, "/v1/tables/tailed/tail?limit=2") as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        assert answer.readline() == b"retry: 1000\n"  # subscribed: what commits now is sent
        console.sql("DELETE FROM tailed WHERE n = 1")
        console.sql("INSERT INTO tailed (n, word, attrs) VALUES (2, 'a', '{\"k\": [1]}')")
        rows = [{"n": n, "word": f"w{n}"} for n in (3, 4, 5)]
        console.call("/v1/ingest/tailed", rows)
        inserted, ingested = _next_event(answer), _next_event(answer)
    assert inserted["event"] == "rows" and inserted["id"] == str(inserted["data"]["snapshot_id"])
    names = [c["name"] for c in inserted["data"]["columns"]]
    assert names == ["_timestamp", "props", "n", "word", "attrs"]
    assert [r[2:] for r in inserted["data"]["rows"]] == [[2, "a", {"k": [1]}]]
    assert inserted["data"]["rows_committed"] == 1
    assert ingested["data"]["rows_committed"] == 3 and ingested["data"]["dropped"] == 0
    assert [r[2:4] for r in ingested["data"]["rows"]] == [[4, "w4"], [5, "w5"]]  # the newest 2
    snapshots = [inserted["data"]["snapshot_id"], ingested["data"]["snapshot_id"]]
    assert snapshots[1] == snapshots[0] + 1


def test_a_missing_table_or_a_bad_limit_is_refused_before_the_stream(console: Console) -> None:
    with _stream(console, "/v1/tables/nowhere/tail") as answer:
        assert answer.status == 404 and json.load(answer)["error"] == "not_found_error"
    with _stream(console, "/v1/tables/logs/tail?limit=0") as answer:
        assert answer.status == 400 and "limit" in json.load(answer)["message"]
