"""The Postgres listener authenticates first: sockets that never finish starting up are cut
at KYMA_PG_AUTH_TIMEOUT_SECONDS and take no connection slot meanwhile, an oversized password
message is refused unread, idle connections are closed as Postgres's idle timeouts say, and
a connection's portals are bounded in number and bytes."""

from __future__ import annotations

import shutil
import socket
import struct
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from raw_client import connect, cstring, error_fields, message, read_message, startup, until
from serve_helpers import Serve, free_port, kyma

AUTH_TIMEOUT = 2


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[Serve, str]]:
    home = Path(tempfile.mkdtemp(prefix="kyma-listener-", dir="/tmp"))
    serve = Serve(
        home,
        KYMA_AUTH="required",
        KYMA_PG_PORT=str(free_port()),
        KYMA_PG_AUTH_TIMEOUT_SECONDS=str(AUTH_TIMEOUT),
        KYMA_PG_MAX_PORTALS="8",
        KYMA_PG_MAX_PORTAL_BYTES="100000",
    )
    try:
        created = kyma(home, "token", "create", "--scope", "admin", "--name", "listener")
        assert created.returncode == 0, created.stderr
        yield serve, created.stdout.strip()
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)


def _admin(serve: Serve, token: str, **kw) -> psycopg.Connection:  # type: ignore[no-untyped-def]
    dsn = f"host=127.0.0.1 port={serve.pg_port} user=kyma dbname=kyma password={token}"
    return psycopg.connect(dsn, connect_timeout=10, **kw)


def _rss(serve: Serve) -> int:
    """The server's resident memory in bytes."""
    for line in Path(f"/proc/{serve.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_sockets_that_never_send_a_password_do_not_lock_an_admin_out(listener) -> None:  # type: ignore[no-untyped-def]
    serve, token = listener
    crowd = []
    try:
        for _ in range(100):  # more than KYMA_PG_MAX_CONNECTIONS (64)
            sock = socket.create_connection(("127.0.0.1", serve.pg_port), timeout=10)
            sock.sendall(startup())
            assert read_message(sock) == (b"R", struct.pack("!i", 3))  # the password, please
            crowd.append(sock)
        started = time.monotonic()
        with _admin(serve, token, autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchall() == [(1,)]
        assert time.monotonic() - started < AUTH_TIMEOUT  # a slot at once, not after the crowd
        for sock in crowd:  # each is cut at the timeout, saying why
            kind, body = read_message(sock)
            assert kind == b"E", kind
            assert error_fields(body)["M"] == "canceling authentication due to timeout"
            assert read_message(sock) == (b"", b"")
    finally:
        for sock in crowd:
            sock.close()


def test_a_slow_start_up_is_cut_at_the_authentication_timeout(listener) -> None:  # type: ignore[no-untyped-def]
    serve, _ = listener
    with socket.create_connection(("127.0.0.1", serve.pg_port), timeout=AUTH_TIMEOUT + 10) as sock:
        packet = startup()
        started = time.monotonic()
        for byte in packet[:6]:  # slow-loris: a byte now and then, never the whole packet
            sock.sendall(bytes([byte]))
            time.sleep(0.25)
        kind, _ = read_message(sock)  # the server ends it; the socket's own timeout would raise
        assert kind in (b"E", b"")
        assert time.monotonic() - started < AUTH_TIMEOUT + 5


def test_a_64_mib_password_message_is_refused_unread(listener) -> None:  # type: ignore[no-untyped-def]
    serve, _ = listener
    before = _rss(serve)
    with socket.create_connection(("127.0.0.1", serve.pg_port), timeout=10) as sock:
        sock.sendall(startup())
        assert read_message(sock)[0] == b"R"
        sock.sendall(b"p" + struct.pack("!i", (64 << 20) + 4) + b"x" * 65536)
        kind, body = read_message(sock)
        assert kind == b"E", kind
        fields = error_fields(body)
        assert (fields["S"], fields["C"]) == ("FATAL", "08P01"), fields
        sent = 65536
        try:  # the rest finds the connection closed; nothing of it is kept
            while sent < 64 << 20:
                sock.sendall(b"x" * (1 << 20))
                sent += 1 << 20
        except OSError:
            pass
    assert _rss(serve) - before < 16 << 20


def test_an_idle_transaction_is_closed_as_postgres_does(listener) -> None:  # type: ignore[no-untyped-def]
    serve, token = listener
    with _admin(serve, token, autocommit=True) as conn:
        conn.execute("SET idle_in_transaction_session_timeout = '500ms'")
        conn.execute("BEGIN")
        conn.execute("SELECT 1")
        time.sleep(1.5)
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            conn.execute("SELECT 1")


def test_portals_are_bounded_in_number_and_bytes(listener) -> None:  # type: ignore[no-untyped-def]
    serve, token = listener
    sock = connect(serve.pg_port, token)
    try:
        sock.sendall(message(b"Q", cstring("BEGIN")))  # portals live until the block ends
        until(sock, b"Z")
        parse = message(b"P", cstring("") + cstring("SELECT 1") + struct.pack("!h", 0))
        binds = [
            message(b"B", cstring(f"p{i}") + cstring("") + struct.pack("!hhh", 0, 0, 0))
            for i in range(9)
        ]
        sock.sendall(parse + b"".join(binds) + message(b"S"))
        replies = until(sock, b"Z")
        kinds = [kind for kind, _ in replies]
        assert kinds == [b"1"] + [b"2"] * 8 + [b"E", b"Z"], kinds
        error = error_fields(replies[-2][1])
        assert error["C"] == "54000" and "KYMA_PG_MAX_PORTALS" in error["M"], error
        sock.sendall(message(b"Q", cstring("ROLLBACK")))
        until(sock, b"Z")
        big = "SELECT repeat('x', 100) AS s FROM generate_series(1, 10000)"  # ~1 MB of rows
        parse = message(b"P", cstring("") + cstring(big) + struct.pack("!h", 0))
        bind = message(b"B", cstring("big") + cstring("") + struct.pack("!hhh", 0, 0, 0))
        execute = message(b"E", cstring("big") + struct.pack("!i", 10))  # suspended after 10
        sock.sendall(message(b"Q", cstring("BEGIN")))
        until(sock, b"Z")
        sock.sendall(parse + bind + execute + message(b"S"))
        replies = until(sock, b"Z")
        errors = [error_fields(body) for kind, body in replies if kind == b"E"]
        assert [e["C"] for e in errors] == ["54000"], replies[:5]
        assert "KYMA_PG_MAX_PORTAL_BYTES" in errors[0]["M"]
    finally:
        sock.close()
