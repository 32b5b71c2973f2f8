"""Benchmark: the web console in headless Chromium — the explorer's first rows and histogram
on a large table, and live tail's commit-to-screen latency under steady ingest.

    python bench/console.py [--rows 10000000] [--repeat 3] [--rate 1000] [--seconds 20]

kyma is a real ``kyma serve`` (embedded catalog, local store, auth off). Table ``logs``
(``n``, ``service``, ``level``, ``body``, ``_timestamp`` over the last 24 hours) is loaded
with ADBC's bulk ingest over Flight SQL. Explorer: the time from opening
``/console/#/explore/logs`` (range "last 24h" chosen in the URL's page, no search) until its
newest rows and histogram are drawn, median of ``--repeat`` (the first, cold, also shown);
the same three kinds of statement the page sends (newest 50, the histogram's ``date_bin``
counts, top values of ``service`` and ``level``) are timed over HTTP from Python and on
DuckDB over a Parquet file of the same rows (the peer). Live tail: with the explorer tailing,
``--rate`` rows a second are ingested over HTTP in 10 commits a second for ``--seconds``;
a MutationObserver in the page stamps each row when it is drawn; latency is that stamp
minus the moment the ingest request was answered (the commit visible), p50 and p99.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import adbc_driver_flightsql.dbapi
import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _harness import Server, percentile

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "console"))
from browser import chromium  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

SERVICES = np.array(["api", "billing", "search", "cart", "auth", "mail"])
LEVELS = np.array(["info", "info", "info", "warn", "error"])
WORDS = np.array(["ok", "timeout", "retry", "done", "slow", "refused"])
BATCH = 500_000


def batch(start: int, count: int, now_ns: int, total: int) -> pa.Table:
    n = np.arange(start, start + count, dtype=np.int64)
    rng = np.random.default_rng(start)
    body = pa.compute.binary_join_element_wise(
        pa.array(np.char.add("request ", n.astype(str))),
        pa.array(WORDS[rng.integers(0, len(WORDS), count)]),
        " ",
    )
    day = 86_400 * 10**9
    return pa.table(
        {
            "_timestamp": pa.array(now_ns - day + n * (day // total), pa.timestamp("ns", "UTC")),
            "n": n,
            "service": SERVICES[rng.integers(0, len(SERVICES), count)],
            "level": LEVELS[rng.integers(0, len(LEVELS), count)],
            "body": body,
        }
    )


def load(server: Server, rows: int, parquet: Path) -> float:
    now_ns = time.time_ns()
    server.sql("CREATE TABLE logs (n long, service string, level string, body string)")
    started = time.perf_counter()
    writer = None
    with adbc_driver_flightsql.dbapi.connect(server.flight_url, autocommit=True) as conn:
        for start in range(0, rows, BATCH):
            table = batch(start, min(BATCH, rows - start), now_ns, rows)
            with conn.cursor() as cur:
                batches = table.to_batches(max_chunksize=50_000)  # a gRPC message each
                reader = pa.RecordBatchReader.from_batches(table.schema, batches)
                cur.adbc_ingest("logs", reader, mode="append")
            writer = writer or pq.ParquetWriter(parquet, table.schema)
            writer.write_table(table)
    assert writer is not None
    writer.close()
    return time.perf_counter() - started


def statements(since: str, duckdb: bool = False) -> list[str]:
    """The explorer's statements; DuckDB spells date_bin time_bucket, its times TIMESTAMPTZ."""
    stamp = "TIMESTAMPTZ" if duckdb else "TIMESTAMP"
    where = f" WHERE _timestamp >= {stamp} '{since}'"
    date_bin = "time_bucket" if duckdb else "date_bin"
    return [
        f"SELECT * FROM logs{where} ORDER BY _timestamp DESC LIMIT 50",
        f"SELECT {date_bin}(INTERVAL '600 seconds', _timestamp, {stamp} '1970-01-01 00:00:00')"
        f" AS bucket, count(*) AS n FROM logs{where} GROUP BY 1 ORDER BY 1",
        f"SELECT service AS value, count(*) AS n FROM logs{where} GROUP BY 1 ORDER BY 2 DESC,"
        " 1 LIMIT 5",
        f"SELECT level AS value, count(*) AS n FROM logs{where} GROUP BY 1 ORDER BY 2 DESC,"
        " 1 LIMIT 5",
    ]


def explorer_seconds(driver, url: str) -> float:  # type: ignore[no-untyped-def]
    driver.get("about:blank")
    started = time.perf_counter()
    driver.get(f"{url}/console/#/explore/logs")
    wait = WebDriverWait(driver, 600, poll_frequency=0.02)
    Select(wait.until(ec.presence_of_element_located((By.ID, "ex-range")))).select_by_value("24h")
    wait.until(lambda d: d.find_element(By.ID, "ex-status").get_attribute("data-range") == "24h")
    return time.perf_counter() - started


OBSERVE = """
window.drawn = [];
new MutationObserver((changes) => {
  const at = Date.now();
  for (const change of changes) for (const node of change.addedNodes) {
    const match = node.classList && node.classList.contains('live-row')
      && /tailbatch (\\d+)/.exec(node.textContent);
    if (match) window.drawn.push([Number(match[1]), at]);
  }
}).observe(document.getElementById('ex-rows'), {childList: true});
"""


def tail_latencies(server: Server, driver, rate: int, seconds: int) -> list[float]:  # type: ignore[no-untyped-def]
    driver.get(f"{server_url(server)}/console/#/explore/logs")
    wait = WebDriverWait(driver, 600, poll_frequency=0.02)
    wait.until(lambda d: d.find_element(By.ID, "ex-status").get_attribute("data-loaded") == "")
    driver.execute_script(OBSERVE)
    driver.find_element(By.ID, "ex-live").click()
    wait.until(lambda d: d.find_element(By.ID, "ex-rows").get_attribute("data-tail") == "open")
    pushed: dict[int, float] = {}
    threading.Thread(target=_listen, args=(server, pushed), daemon=True).start()
    conn = server.connection()
    per_commit = max(1, rate // 10)
    answered: dict[int, float] = {}
    start = time.monotonic()
    for i in range(seconds * 10):
        rows = [
            {"n": -i, "service": "tail", "body": f"tailbatch {i} row {k}"}
            for k in range(per_commit)
        ]
        conn.request("POST", "/v1/ingest/logs", "\n".join(json.dumps(r) for r in rows))
        answer = conn.getresponse()
        assert answer.status == 200, answer.read()
        answer.read()
        answered[i] = time.time() * 1000
        pause = start + (i + 1) / 10 - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    time.sleep(2)
    drawn: dict[int, float] = {}
    for batch_id, at in driver.execute_script("return window.drawn"):
        drawn.setdefault(batch_id, at)  # the first row of a commit drawn
    missing = sorted(set(answered) - set(drawn))
    if missing:
        print(f"  live tail: {len(missing)} of {len(answered)} commits never drawn: {missing[:10]}")
    events = [pushed[i] - answered[i] for i in sorted(pushed) if i in answered]
    print(
        f"  the same commits as an SSE client in Python receives them: p50"
        f" {percentile(events, 50):.0f} ms, p99 {percentile(events, 99):.0f} ms"
    )
    return [drawn[i] - answered[i] for i in sorted(drawn) if i in answered]


def _listen(server: Server, pushed: dict[int, float]) -> None:
    """Stamp each tail event's commit (by its first row's batch number) as it arrives."""
    conn = server.connection()
    conn.request("GET", "/v1/tables/logs/tail")
    answer = conn.getresponse()
    for line in answer:
        if line.startswith(b"data:"):
            at = time.time() * 1000
            body = json.loads(line[5:])
            text = next((v for v in body["rows"][0] if isinstance(v, str) and "tailbatch" in v), "")
            if text:
                pushed.setdefault(int(text.split()[1]), at)


def server_url(server: Server) -> str:
    return f"http://{server.host}:{server.port}"


def timed(run, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times[0], statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    when = f"{datetime.now(UTC):%F %H:%M} UTC"
    print(f"rows={args.rows:,}; {platform.node()} {platform.machine()}; {when}")
    folder = Path(tempfile.mkdtemp(prefix="kyma-bench-console-"))
    server = Server()
    with chromium() as driver:
        try:
            run(args, server, driver, folder)
        finally:
            server.stop()
            shutil.rmtree(server.home.parent, ignore_errors=True)
            shutil.rmtree(folder, ignore_errors=True)


def run(args: argparse.Namespace, server: Server, driver, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """Load the table, then time the explorer and live tail."""
    loaded = load(server, args.rows, folder / "logs.parquet")
    print(f"loaded {args.rows:,} rows in {loaded:.1f} s")
    since = datetime.fromtimestamp(time.time() - 86_400, UTC).strftime("%Y-%m-%d %H:%M:%S")
    conn = server.connection()
    kyma_first, kyma_median = timed(
        lambda: [server.sql(s, conn) for s in statements(since)], args.repeat
    )
    duck = duckdb.connect()
    duck.execute(f"CREATE VIEW logs AS SELECT * FROM read_parquet('{folder / 'logs.parquet'}')")
    duck.execute("SET TimeZone = 'UTC'")
    duck_first, duck_median = timed(
        lambda: [duck.execute(s).fetchall() for s in statements(since, duckdb=True)],
        args.repeat,
    )
    browser = [explorer_seconds(driver, server_url(server)) for _ in range(args.repeat)]
    print(f"{'explorer (newest 50, histogram, 2 facets)':<46}{'first':>8}{'median':>8}")
    median = statistics.median(browser)
    print(f"{'  console in Chromium, end to end':<46}{browser[0]:>8.2f}{median:>8.2f}")
    print(f"{'  kyma, its 4 statements over HTTP':<46}{kyma_first:>8.2f}{kyma_median:>8.2f}")
    print(f"{'  DuckDB, the same over Parquet (peer)':<46}{duck_first:>8.2f}{duck_median:>8.2f}")
    print(f"  kyma HTTP / DuckDB: {kyma_median / duck_median:.2f}x")
    latencies = tail_latencies(server, driver, args.rate, args.seconds)
    print(
        f"live tail at {args.rate} rows/s, {len(latencies)} commits: commit-to-screen"
        f" p50 {percentile(latencies, 50):.0f} ms, p99 {percentile(latencies, 99):.0f} ms,"
        f" max {max(latencies):.0f} ms"
    )


if __name__ == "__main__":
    main()
