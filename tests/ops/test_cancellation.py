"""A cancelled statement stops: a client that disconnects over HTTP or the Postgres protocol,
a Flight client that cancels its call, a Postgres CancelRequest, the timeout and a session's
statement_timeout each leave the server's CPU idle within about a second (measured from
/proc/<pid>/stat), and the metrics count it ``cancelled`` or ``timeout``, never ``ok``."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pyarrow.flight as flight
import pytest
from ops_helpers import metric, query, request, serve_on, wait_until
from serve_helpers import Serve, free_port

from kyma.flight import _commands as cmd
from kyma.flight import _messages as msg

TIMEOUT = 6  # KYMA_QUERY_TIMEOUT_SECONDS of the server under test
# One long aggregation (minutes): no batch comes out before it is done. The server runs
# without a memory limit, which would refuse the series before it starts.
SLOW = "SELECT count(DISTINCT value % 1000003) AS n FROM generate_series(1, 5000000000)"
TICKS = os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def serve(module_catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    home: Path = tmp_path_factory.mktemp("cancel") / "home"
    server = serve_on(
        module_catalog_url,
        home,
        KYMA_QUERY_TIMEOUT_SECONDS=str(TIMEOUT),
        KYMA_QUERY_MEMORY_BYTES="0",
        KYMA_PG_PORT=str(free_port()),
    )
    try:
        yield server
    finally:
        assert server.stop() == 0, "".join(server.output[-40:])


def _cpu(serve: Serve) -> float:
    """CPU seconds the server process has used (user + system, all threads)."""
    fields = Path(f"/proc/{serve.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _busy(serve: Serve, window: float = 0.5) -> float:
    """The server's CPU seconds per second over ``window``."""
    before = _cpu(serve)
    time.sleep(window)
    return (_cpu(serve) - before) / window


def _metrics(serve: Serve) -> str:
    return request(f"{serve.url}/metrics")[2].decode()


def _running(serve: Serve) -> float:
    return metric(_metrics(serve), "kyma_queries_running")


def _outcomes(serve: Serve, outcome: str) -> float:
    return metric(_metrics(serve), "kyma_queries_total", outcome=outcome)


def _assert_stops(serve: Serve, started: float) -> None:
    """Within 3 s of ``started`` the server is idle (under 0.04 CPU s/s), no query running."""
    wait_until(lambda: _running(serve) == 0, 2, "the cancelled query leaving its slot")
    deadline = started + 3
    while _busy(serve) > 0.04:
        assert time.monotonic() < deadline, "the cancelled query is still using the CPU"
    assert time.monotonic() - started < 3.5


def _until_running(serve: Serve) -> None:
    wait_until(lambda: _running(serve) == 1, 10, "the slow query running")
    time.sleep(0.5)
    assert _busy(serve) > 0.05  # it computes (a loaded machine gives it little)


def test_a_client_that_disconnects_cancels_its_query(serve: Serve) -> None:
    before = _outcomes(serve, "cancelled")
    host, port = serve.url.removeprefix("http://").split(":")
    body = json.dumps({"sql": SLOW}).encode()
    conn = socket.create_connection((host, int(port)))
    conn.sendall(
        b"POST /v1/query HTTP/1.1\r\nHost: kyma\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    _until_running(serve)
    conn.close()
    _assert_stops(serve, time.monotonic())
    assert _outcomes(serve, "cancelled") == before + 1
    assert _outcomes(serve, "ok") == 0
    serve._wait_for(r"POST /v1/query 499 ")  # logged as the client's doing, not an error
    assert query(serve, "SELECT 1 AS one")[2]["rows"] == [[1]]


def test_the_timeout_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "timeout")
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(a=query(serve, SLOW)))
    started = time.monotonic()
    thread.start()
    _until_running(serve)
    thread.join(TIMEOUT + 5)
    assert answer["a"][0] == 408, answer
    assert time.monotonic() - started < TIMEOUT + 2
    _assert_stops(serve, time.monotonic())
    assert _outcomes(serve, "timeout") == before + 1


def test_a_postgres_cancel_request_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "cancelled")
    with psycopg.connect(
        host="127.0.0.1",
        port=serve.pg_port,
        user="anyone",
        dbname="kyma",
        autocommit=True,
        connect_timeout=10,
    ) as conn:
        failed: dict = {}

        def run() -> None:
            try:
                conn.execute(SLOW)
            except psycopg.Error as e:
                failed["e"] = e

        thread = threading.Thread(target=run)
        thread.start()
        _until_running(serve)
        conn.cancel_safe()
        started = time.monotonic()
        thread.join(5)
        assert isinstance(failed.get("e"), psycopg.errors.QueryCanceled), failed
        _assert_stops(serve, started)
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
    assert _outcomes(serve, "cancelled") == before + 1


def test_a_flight_client_that_cancels_its_call_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "cancelled")
    client = flight.FlightClient(serve.flight_url)
    descriptor = flight.FlightDescriptor.for_command(
        cmd.pack(msg.CommandStatementQuery(query=SLOW))
    )
    # The call's deadline: gRPC cancels it on the server when it passes.
    options = flight.FlightCallOptions(timeout=2)
    started = time.monotonic()
    with pytest.raises(flight.FlightTimedOutError):
        client.get_flight_info(descriptor, options)
    _assert_stops(serve, started + 1)
    assert _outcomes(serve, "cancelled") == before + 1
    client.close()


def _psql(serve: Serve, **kw) -> psycopg.Connection:  # type: ignore[no-untyped-def]
    return psycopg.connect(
        host="127.0.0.1", port=serve.pg_port, user="anyone", dbname="kyma", connect_timeout=10, **kw
    )


def test_a_postgres_statement_timeout_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "timeout")
    with _psql(serve, autocommit=True) as conn:
        conn.execute("SET statement_timeout = '1s'")
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled) as raised:
            conn.execute(SLOW)
        assert str(raised.value) == "canceling statement due to statement timeout"
        assert time.monotonic() - started < TIMEOUT  # the session's second, not the server's
        _assert_stops(serve, time.monotonic())
        conn.execute("BEGIN")  # SET LOCAL: this block only
        conn.execute("SET LOCAL statement_timeout = 500")
        with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
            conn.execute(SLOW)
        conn.execute("ROLLBACK")
        assert conn.execute("SHOW statement_timeout").fetchall() == [("1s",)]
        _assert_stops(serve, time.monotonic())
    assert _outcomes(serve, "timeout") == before + 2


def test_an_http_statement_timeout_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "timeout")
    started = time.monotonic()
    body = json.dumps({"sql": SLOW, "statement_timeout": "1s"}).encode()
    status, _, answer = request(f"{serve.url}/v1/query", body)
    assert status == 408, answer
    assert b"canceling statement due to statement timeout" in answer
    assert time.monotonic() - started < TIMEOUT
    _assert_stops(serve, time.monotonic())
    assert _outcomes(serve, "timeout") == before + 1


def test_a_postgres_client_that_disconnects_stops_the_work(serve: Serve) -> None:
    before = _outcomes(serve, "cancelled")
    conn = _psql(serve, autocommit=True)
    failed: dict = {}

    def run() -> None:
        try:
            conn.execute(SLOW)
        except psycopg.Error as e:
            failed["e"] = e

    thread = threading.Thread(target=run)
    thread.start()
    _until_running(serve)
    gone = socket.socket(fileno=os.dup(conn.pgconn.socket))  # the client's end, closed
    gone.shutdown(socket.SHUT_RDWR)
    gone.close()
    started = time.monotonic()
    thread.join(10)
    _assert_stops(serve, started)
    assert _outcomes(serve, "cancelled") == before + 1
    assert "e" in failed
    conn.close()
