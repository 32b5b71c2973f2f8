"""The connector tests' source: a second real Postgres on loopback, TLS on, seeded once.

It is separate from the catalog server of ``tests/conftest.py``: a connector reads it as an
operational database, over TLS, as a login role that is not a superuser.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from psycopg import sql
from source_postgres import SourceDatabase, SourcePostgres

from kyma.runtime.postgres import EmbeddedPostgres

HOST = "127.0.0.1"
SEED = Path(__file__).with_name("source_seed.sql")

# ssl itself is turned on after the start: the certificate must be in the data folder first,
# and the folder exists only once initdb has run (see source_pg).
SETTINGS = """
# Added by kyma's connector tests.
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
log_statement = 'all'
log_min_error_statement = error
shared_preload_libraries = 'pg_stat_statements'
"""
_TLS_WAIT = 10  # seconds for the reloaded server to accept TLS connections


@pytest.fixture(scope="session")
def source_pg() -> Iterator[SourcePostgres]:
    """A second Postgres for the session: TLS with a self-signed certificate for 127.0.0.1."""
    # The same kind of folder as server_tmpdir() in tests/conftest.py, which this conftest
    # cannot import: outside /tmp/pytest-of-root, reachable by the postgres user.
    home = Path(tempfile.mkdtemp(prefix="kyma-test-source-", dir="/tmp"))
    pg = EmbeddedPostgres(home / "source", log=lambda _: None, settings=SETTINGS)
    try:
        admin_url = pg.start()
        certificate, key = _self_signed_certificate(HOST)
        ca_file = home / "source-ca.crt"
        ca_file.write_bytes(certificate)
        ca_file.chmod(0o644)
        # The data folder belongs to the server's OS user; its key must too, with mode 0600.
        owner = pg.data_dir.stat()
        for name, content in (("server.crt", certificate), ("server.key", key)):
            path = pg.data_dir / name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(content)
            os.chown(path, owner.st_uid, owner.st_gid)
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET ssl = on")
            conn.execute("SELECT pg_reload_conf()")
        _wait_for_tls(admin_url, ca_file)
        port = int(admin_url.rsplit(":", 1)[1].split("/")[0])
        yield SourcePostgres(admin_url, pg.log_file, ca_file, HOST, port)
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def source_db(source_pg: SourcePostgres) -> SourceDatabase:
    """The database ``fed`` on ``source_pg``: ICU en-US, New York time, seeded, role ``app``."""
    password = secrets.token_urlsafe(16)
    with psycopg.connect(source_pg.admin_url, autocommit=True) as conn:
        conn.execute(
            "CREATE DATABASE fed TEMPLATE template0"
            " LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        )
        conn.execute("ALTER DATABASE fed SET timezone TO 'America/New_York'")
        role = sql.SQL("CREATE ROLE app LOGIN NOSUPERUSER PASSWORD {}")
        conn.execute(role.format(sql.Literal(password)))
    admin_url = source_pg.admin_url.rsplit("/", 1)[0] + "/fed"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(SEED.read_text())
        conn.execute("SELECT pg_stat_statements_reset()")
    return SourceDatabase(source_pg.url("fed", "app"), password, admin_url)


def _self_signed_certificate(host: str) -> tuple[bytes, bytes]:
    """A PEM certificate for ``host`` (CN and SAN IP) that is its own CA, and its PEM key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    public_key = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(public_key), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


def _wait_for_tls(url: str, ca_file: Path) -> None:
    """Wait until the reloaded server answers ``sslmode=verify-full`` for its certificate."""
    deadline = time.monotonic() + _TLS_WAIT
    refused: psycopg.OperationalError | None = None
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(
                url, sslmode="verify-full", sslrootcert=str(ca_file), connect_timeout=5
            ):
                return
        except psycopg.OperationalError as e:
            refused = e
        time.sleep(0.05)
    raise RuntimeError(f"the source Postgres refused TLS for {_TLS_WAIT}s: {refused}") from refused
