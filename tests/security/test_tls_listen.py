"""TLS on every listener (reachable by a client that trusts the test CA, not by others), and
the refusal to serve a non-loopback address without auth."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.request

import adbc_driver_flightsql.dbapi
import psycopg
import pytest
from adbc_driver_flightsql import DatabaseOptions
from secure_serve import Secure


def test_banner_prints_tls_urls(secure: Secure) -> None:
    serve = secure.serve
    assert serve.url.startswith("https://127.0.0.1:")
    assert serve.flight_url.startswith("grpc+tls://127.0.0.1:")
    assert serve.otlp_grpc_url.startswith("grpc+tls://127.0.0.1:")
    assert serve.otlp_http_url.startswith("https://127.0.0.1:")


def test_https_needs_the_ca(secure: Secure) -> None:
    with urllib.request.urlopen(f"{secure.serve.url}/healthz", context=secure.context) as ok:
        assert ok.status == 200
    with pytest.raises(urllib.error.HTTPError, match="404") as missing:  # TLS done: OTLP has no GET
        urllib.request.urlopen(f"{secure.serve.otlp_http_url}/healthz", context=secure.context)
    missing.value.close()
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(f"{secure.serve.url}/healthz", timeout=10)  # system CAs only
    plain = secure.serve.url.replace("https://", "http://")
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(f"{plain}/healthz", timeout=10)


def test_https_serves_large_bodies_and_keeps_serving_after_a_stalled_handshake(
    secure: Secure,
) -> None:
    host, port = secure.serve.url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port))):  # connects, never says hello
        rows = "\n".join(f'{{"msg": "{"x" * 200} {i}"}}' for i in range(2000)).encode()
        status, answer, _ = secure.call("/v1/ingest/logs", secure.tokens["admin"], body=rows)
        assert status == 200 and answer["rows"] == 2000
        status, answer, _ = secure.sql("SELECT msg FROM logs", secure.tokens["admin"])
        assert status == 200 and len(answer["rows"]) > 2000


def test_postgres_protocol_needs_tls_and_the_ca(secure: Secure) -> None:
    dsn = f"host=127.0.0.1 port={secure.serve.pg_port} user=kyma connect_timeout=10"
    token = secure.tokens["read_logs"]
    with psycopg.connect(
        f"{dsn} sslmode=verify-full sslrootcert={secure.tls.ca}", password=token
    ) as conn:
        assert conn.info.pgconn.ssl_in_use
        one = conn.execute("SELECT count(*) FROM logs WHERE msg = 'logs row'").fetchone()
        assert one == (1,)
    with pytest.raises(psycopg.OperationalError, match="needs TLS"):
        psycopg.connect(f"{dsn} sslmode=disable", password=token)
    with pytest.raises(psycopg.OperationalError, match="(?i)certificate verify failed"):
        psycopg.connect(f"{dsn} sslmode=verify-full sslrootcert=system", password=token)


def test_a_stalled_postgres_tls_handshake_is_cut_at_the_authentication_timeout(
    secure: Secure,
) -> None:
    """SSLRequest, the server's yes, then no ClientHello: the socket is closed once
    KYMA_PG_AUTH_TIMEOUT_SECONDS (5 by default) pass, not kept with its thread forever."""
    with socket.create_connection(("127.0.0.1", secure.serve.pg_port), timeout=30) as sock:
        sock.sendall(struct.pack("!ii", 8, 80877103))  # SSLRequest
        assert sock.recv(1) == b"S"
        while sock.recv(1024):  # until closed: the 30 s socket timeout would raise first
            pass


def test_flight_needs_the_ca(secure: Secure) -> None:
    options = {DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {secure.tokens['admin']}"}
    with (
        pytest.raises(Exception, match="(?i)certificate|handshake|unavailable"),
        adbc_driver_flightsql.dbapi.connect(
            secure.serve.flight_url, db_kwargs=options, autocommit=True
        ) as conn,
        conn.cursor() as cur,
    ):
        cur.execute("SELECT 1")


def test_kyma_sql_over_https(secure: Secure) -> None:
    base = [sys.executable, "-m", "kyma", "sql", "--url", secure.serve.url]
    query = ["--token", secure.tokens["read_logs"], "-c", "SELECT count(*) AS n FROM secrets"]
    trusted = subprocess.run(
        [*base, "--cacert", str(secure.tls.ca), *query], capture_output=True, text=True
    )
    assert trusted.returncode == 1 and "'secrets'" in trusted.stdout + trusted.stderr
    query[-1] = "SELECT msg FROM logs WHERE msg = 'logs row'"
    trusted = subprocess.run(
        [*base, "--cacert", str(secure.tls.ca), *query], capture_output=True, text=True
    )
    assert trusted.returncode == 0 and "logs row" in trusted.stdout, trusted.stderr
    untrusted = subprocess.run([*base, *query], capture_output=True, text=True)
    assert untrusted.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in (
        untrusted.stdout + untrusted.stderr
    )


def _serve(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "kyma", "serve"],
        env={**os.environ, "KYMA_HOME": str(tmp_path / "home"), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_refuses_a_non_loopback_listen_without_auth(tmp_path, host: str) -> None:  # type: ignore[no-untyped-def]
    refused = _serve(tmp_path, KYMA_HTTP_HOST=host)
    assert refused.returncode == 1
    assert f"refusing to listen on {host!r} without auth" in refused.stderr
    assert "KYMA_AUTH=required" in refused.stderr
    assert "KYMA_ALLOW_INSECURE_LISTEN=true" in refused.stderr
    assert not (tmp_path / "home" / "catalog").exists()  # refused before anything started


def test_half_a_tls_setting_is_refused(tmp_path, secure: Secure) -> None:  # type: ignore[no-untyped-def]
    refused = _serve(tmp_path, KYMA_TLS_CERT_FILE=str(secure.tls.cert))
    assert refused.returncode == 1 and "set both" in refused.stderr
