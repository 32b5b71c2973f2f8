"""Benchmark: federated queries on a Postgres source against the same SQL run in Postgres.

    python bench/federation.py [--rows 5000000] [--repeat 7] [--repeat-off 3]

A source Postgres (the system's binaries, started by kyma's EmbeddedPostgres, stock settings
but a larger max_wal_size for the load; TLS off, loopback only) gets ``events`` (``--rows``
rows made by generate_series) and ``users`` (100 000 rows), then VACUUM ANALYZE. A real
``kyma serve`` reads them through a connector. Each query runs three ways:

- kyma: ``POST /v1/query`` with pushdown on (the default), through HTTP and JSON;
- direct: the same SQL on one open psycopg connection, every row fetched into Python;
- kyma without pushdown: ``"pushdown": false`` fetches only the projected columns of every
  row and DataFusion does the rest (``--repeat-off`` runs, as it moves the whole table).

Each is run once to warm up, then the median of the runs is reported; kyma's and the
direct runs alternate. Rows and bytes transferred come from the answer's
``pushdown_summary``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from _harness import Server, seconds

from kyma.runtime.postgres import EmbeddedPostgres

USERS = 100_000
SECRET_ENV = "KYMA_SECRET_BENCH_SOURCE"
SOURCE_SETTINGS = "max_wal_size = '4GB'\n"  # no checkpoint storm while loading
KINDS = (
    "view", "click", "search", "add_to_cart", "remove_from_cart", "checkout",
    "purchase", "refund", "login", "logout", "signup", "share",
)  # fmt: skip
COUNTRIES = (
    "US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "AU", "ES",
    "IT", "NL", "SE", "PL", "MX", "KR", "CN", "ZA", "AR", "NG",
)  # fmt: skip


def _array(values: tuple[str, ...]) -> str:
    return "ARRAY[" + ", ".join(f"'{v}'" for v in values) + "]"


LOAD = f"""
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, country text NOT NULL);
CREATE TABLE events (
    id bigint NOT NULL, user_id int NOT NULL, kind text NOT NULL,
    amount numeric(10, 2) NOT NULL, score double precision NOT NULL,
    created_at timestamptz NOT NULL
);
SELECT setseed(0.23);
INSERT INTO users
SELECT i, 'user-' || i, ({_array(COUNTRIES)})[1 + floor(random() * {len(COUNTRIES)})::int]
FROM generate_series(1, {USERS}) AS i;
INSERT INTO events
SELECT i, 1 + floor(random() * {USERS})::int,
       ({_array(KINDS)})[1 + floor(random() * {len(KINDS)})::int],
       round((random() * 1000)::numeric, 2), random(),
       timestamptz '2026-01-01 00:00:00+00' + i * interval '6 seconds'
FROM generate_series(1, %(rows)s) AS i;
ALTER TABLE events ADD PRIMARY KEY (id);
"""

# {events} and {users} become src.public.* for kyma and public.* for Postgres.
QUERIES = {
    # 1/12 of kinds times 1.2 % of scores: about 0.1 % of the rows.
    "filter_0.1%": (
        "SELECT id, user_id, amount, created_at FROM {events}"
        " WHERE kind = 'refund' AND score < 0.012"
    ),
    "group_by_kind": (
        "SELECT kind, count(*) AS n, sum(amount) AS total, avg(score) AS avg_score"
        " FROM {events} GROUP BY kind ORDER BY kind"
    ),
    "top10_score": (
        "SELECT id, user_id, kind, score FROM {events} ORDER BY score DESC, id LIMIT 10"
    ),
    "join_by_country": (
        "SELECT u.country, count(*) AS n, sum(e.amount) AS total"
        " FROM {events} e JOIN {users} u ON u.id = e.user_id"
        " WHERE e.kind = 'purchase' GROUP BY u.country ORDER BY u.country"
    ),
}


def post_query(conn, text: str, *, pushdown: bool) -> tuple[int, dict]:
    """``POST /v1/query`` with the pushdown switch (the harness's ``sql`` has none)."""
    body = json.dumps({"sql": text, "pushdown": pushdown})
    conn.request("POST", "/v1/query", body, {"Content-Type": "application/json"})
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read())


def kyma_query(conn, text: str, *, pushdown: bool) -> dict:
    status, result = post_query(conn, text, pushdown=pushdown)
    assert status == 200, result
    return result


@contextmanager
def source_postgres(prefix: str) -> Iterator[tuple[str, EmbeddedPostgres]]:
    """A source Postgres on loopback (its admin URL), removed afterwards."""
    # In /tmp: the source runs as the postgres user, which must reach its folder.
    work = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    pg = EmbeddedPostgres(work / "source", log=lambda _: None, settings=SOURCE_SETTINGS)
    try:
        yield pg.start(), pg
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def serving(url: str) -> Iterator[Server]:
    """A ``kyma serve`` with the connector ``src`` on ``url``, removed afterwards."""
    os.environ[SECRET_ENV] = urlsplit(url).password or ""  # kyma serve inherits it
    server = Server()
    try:
        create_connector(server, url)
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.home.parent, ignore_errors=True)


def transferred(answer: dict) -> tuple[int, int, float]:
    """Rows, bytes and source milliseconds over every scan of one answer."""
    scans = answer["pushdown_summary"]
    return (
        sum(s["rows_fetched"] for s in scans),
        sum(s["bytes_fetched"] for s in scans),
        sum(s["elapsed_ms"] for s in scans),
    )


def load_source(url: str, rows: int) -> None:
    """``events`` and ``users``, vacuumed and analyzed."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(LOAD.replace("%(rows)s", str(rows)))
        conn.execute("VACUUM ANALYZE users, events")
        size = conn.execute("SELECT pg_total_relation_size('events')").fetchone()[0]
    print(
        f"loaded events ({rows:,} rows, {size / 2**20:,.0f} MiB with its index) and users"
        f" ({USERS:,} rows) in {time.perf_counter() - started:.0f} s"
    )


def create_connector(server: Server, url: str) -> None:
    """Connector ``src`` on ``url``; its password reaches kyma serve as ``$env:SECRET_ENV``."""
    parts = urlsplit(url)
    body = {
        "name": "src",
        "type": "postgres",
        "connection": {
            "url": f"{parts.scheme}://{parts.username}@{parts.hostname}:{parts.port}{parts.path}",
            "secret_ref": f"$env:{SECRET_ENV}",
            "tls": "disabled",
            "allow_insecure": True,
            "pool_size": 4,
        },
    }
    conn = server.connection()
    conn.request("POST", "/v1/connectors", json.dumps(body), {"Content-Type": "application/json"})
    created = conn.getresponse()
    reply = created.read()
    assert created.status == 201, reply


def compare(server: Server, direct: psycopg.Connection, repeat: int, repeat_off: int) -> None:
    """Run every query three ways and print one line each, then the pushed SQL."""
    conn = server.connection()
    print(
        f"median of {repeat} runs, kyma and direct alternating (pushdown off: {repeat_off}),"
        " after one warm-up; kyma's time includes HTTP and JSON"
    )
    print(
        f"{'query':<17}{'kyma ms':>9}{'fetch ms':>9}{'rows':>7}{'bytes':>10}"
        f"{'direct ms':>11}{'rows':>7}{'kyma/direct':>12}"
        f"{'no-pd ms':>10}{'fetch ms':>9}{'rows':>11}{'bytes':>13}{'no-pd/kyma':>11}"
    )
    pushed = {}
    for name, template in QUERIES.items():
        kyma_sql = template.format(events="src.public.events", users="src.public.users")
        pg_sql = template.format(events="public.events", users="public.users")
        # Warm-ups, which also give the counters and the answers' sizes.
        on = kyma_query(conn, kyma_sql, pushdown=True)
        off = kyma_query(conn, kyma_sql, pushdown=False)
        expected = direct.execute(pg_sql).fetchall()
        assert len(on["rows"]) == len(off["rows"]) == len(expected), name
        fetch_ms: dict[bool, list[float]] = {True: [], False: []}

        def run_kyma(pushdown: bool, q=kyma_sql, fetch_ms=fetch_ms) -> None:
            answer = kyma_query(conn, q, pushdown=pushdown)
            fetch_ms[pushdown].append(transferred(answer)[2])

        def run_direct(q=pg_sql) -> None:
            direct.execute(q).fetchall()

        # Alternated, so a slow spell of this shared VM hits both sides alike.
        pairs = [(seconds(lambda: run_kyma(True)), seconds(run_direct)) for _ in range(repeat)]
        kyma_s, direct_s = (statistics.median(side) for side in zip(*pairs, strict=True))
        off_s = statistics.median(seconds(lambda: run_kyma(False)) for _ in range(repeat_off))
        rows, nbytes, _ = transferred(on)
        off_rows, off_bytes, _ = transferred(off)
        pushed[name] = [s["sql"] for s in on["pushdown_summary"]]
        print(
            f"{name:<17}{kyma_s * 1000:>9.1f}{statistics.median(fetch_ms[True]):>9.1f}"
            f"{rows:>7,}{nbytes:>10,}{direct_s * 1000:>11.1f}{len(expected):>7,}"
            f"{kyma_s / direct_s:>11.2f}x{off_s * 1000:>10.0f}"
            f"{statistics.median(fetch_ms[False]):>9.0f}{off_rows:>11,}"
            f"{off_bytes:>13,}{off_s / kyma_s:>10.1f}x"
        )
    print("fetch ms = the scans' elapsed_ms in pushdown_summary (the source's work, the")
    print("ADBC transfer and the conversion to kyma's types); the rest of kyma's time is")
    print("planning, DataFusion, HTTP and JSON.")
    for name, statements in pushed.items():
        for statement in statements:
            print(f"pushed {name}: {statement}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--repeat-off", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores;"
        " source Postgres on loopback, TLS off"
    )
    with source_postgres("kyma-bench-federation-") as (url, _):
        load_source(url, args.rows)
        with serving(url) as server, psycopg.connect(url, autocommit=True) as direct:
            compare(server, direct, args.repeat, args.repeat_off)


if __name__ == "__main__":
    main()
