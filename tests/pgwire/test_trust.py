"""Auth off: the Postgres listener trusts its (loopback) clients, as the HTTP API does.
Also the cancel request, on a serve without result limits (a long query must stream)."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import shutil
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import asyncpg
import psycopg
import pytest
from serve_helpers import Serve, free_port


@pytest.fixture(scope="module")
def trusted() -> Iterator[tuple[Serve, str]]:
    home = Path(tempfile.mkdtemp(prefix="kyma-pgwire-trust-", dir="/tmp"))
    port = free_port()
    serve = Serve(
        home,
        KYMA_PG_PORT=str(port),
        KYMA_MAX_RESULT_ROWS="0",
        KYMA_MAX_RESULT_BYTES="0",
        KYMA_PG_MAX_CONNECTIONS="2",
    )
    try:
        assert f"Postgres      postgresql://127.0.0.1:{port}" in "".join(serve.output)
        yield serve, f"host=127.0.0.1 port={port} user=anyone dbname=kyma connect_timeout=10"
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)


def test_without_auth_a_loopback_client_needs_no_password(trusted: tuple[Serve, str]) -> None:
    _, dsn = trusted
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (x real, b bool, v vector(2))")
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
        assert conn.execute("SELECT current_user").fetchone() == ("anyone",)
        cur = conn.execute("SELECT 1.5 AS x, true AS b, 7 AS i")
        assert cur.fetchone() == (Decimal("1.5"), True, 7)  # a literal with a point: numeric
        assert [c.type_code for c in cur.description] == [1700, 16, 20]
        cur = conn.execute(
            "SELECT INTERVAL '1 day 2 hours' AS i, CAST(1.5 AS DECIMAL(10, 2)) AS d,"
            " DATE '2024-01-31' AS day, ARRAY['a b', NULL] AS texts"
        )
        assert cur.fetchone() == (
            dt.timedelta(days=1, hours=2),
            Decimal("1.50"),
            dt.date(2024, 1, 31),
            ["a b", None],
        )
        assert [c.type_code for c in cur.description] == [1186, 1700, 1082, 1009]


def _running(serve: Serve) -> float:
    with urllib.request.urlopen(f"{serve.url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return float(re.search(r"^kyma_queries_running (\S+)", text, re.M).group(1))


def test_a_cancel_request_stops_the_running_query(trusted: tuple[Serve, str]) -> None:
    serve, dsn = trusted
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE ten (n long)")
        conn.execute("SELECT 1")  # the table exists; rows go in over HTTP
    body = "\n".join(f'{{"n": {i}}}' for i in range(10)).encode()
    with urllib.request.urlopen(f"{serve.url}/v1/ingest/ten", data=body, timeout=30) as ack:
        assert ack.status == 200
    joined = ", ".join(f"ten t{i}" for i in range(9))  # 10^9 combinations: minutes of work
    mixed = " + ".join(f"t{i}.n * {p}" for i, p in enumerate((3, 7, 11, 13, 17, 19, 23, 29, 31)))
    with psycopg.connect(dsn, autocommit=True) as conn:
        timer = threading.Timer(1.0, conn.cancel_safe)
        timer.start()
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled, match="user request"):
            conn.execute(f"SELECT t0.n FROM {joined} WHERE ({mixed}) % 1000 = 0").fetchall()
        assert time.monotonic() - started < 15
        deadline = time.monotonic() + 15  # the work itself stops at its next checkpoint
        while _running(serve) > 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _running(serve) == 0
        assert conn.execute("SELECT count(*) FROM ten").fetchone() == (10,)

    async def asyncpg_cancels() -> int:  # a timeout makes asyncpg send the cancel request
        port = int(dsn.split("port=")[1].split()[0])
        conn = await asyncpg.connect(host="127.0.0.1", port=port, user="anyone", timeout=10)
        try:
            with pytest.raises(TimeoutError):
                await conn.fetch(f"SELECT t0.n FROM {joined} WHERE ({mixed}) % 1000 = 0", timeout=1)
            return await conn.fetchval("SELECT count(*) FROM ten")
        finally:
            await conn.close()

    async def asyncpg_describes_without_running() -> list[int]:
        port = int(dsn.split("port=")[1].split()[0])
        conn = await asyncpg.connect(host="127.0.0.1", port=port, user="anyone", timeout=10)
        try:  # Describe plans with LIMIT NULL: running that would take minutes
            rows = await conn.fetch(
                f"SELECT t0.n FROM {joined} WHERE t0.n = 3 LIMIT $1", 2, timeout=60
            )
            return [r["n"] for r in rows]
        finally:
            await conn.close()

    assert asyncio.run(asyncpg_describes_without_running()) == [3, 3]
    started = time.monotonic()
    assert asyncio.run(asyncpg_cancels()) == 10
    assert time.monotonic() - started < 60  # uncancelled, the join runs for minutes
    deadline = time.monotonic() + 60
    while _running(serve) > 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _running(serve) == 0


def test_connections_past_the_limit_are_refused(trusted: tuple[Serve, str]) -> None:
    _, dsn = trusted
    with psycopg.connect(dsn) as first, psycopg.connect(dsn) as second:
        with pytest.raises(psycopg.OperationalError) as refused:
            psycopg.connect(dsn)
        assert "too many Postgres protocol connections: 2 are open" in str(refused.value)
        assert "KYMA_PG_MAX_CONNECTIONS" in str(refused.value)
        assert first.execute("SELECT 1").fetchone() == (1,)
        second.close()
        deadline = time.monotonic() + 10  # the server frees the slot when it sees the close
        while True:
            try:
                third = psycopg.connect(dsn)
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline, "the closed connection's slot came back"
                time.sleep(0.1)
        with third:
            assert third.execute("SELECT 2").fetchone() == (2,)
