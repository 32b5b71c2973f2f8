"""What the tests know about the source Postgres connectors read, and a way to ask it directly.

The fixture that starts the server (``source_pg``) lives in ``tests/conftest.py``, shared by
the connector and security tests; these names live here because a test module cannot import
from a ``conftest.py`` (every conftest is the module ``conftest``).
"""

from __future__ import annotations

import datetime
import ipaddress
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import psycopg.adapt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from psycopg.abc import Buffer

HOST = "127.0.0.1"


@dataclass(frozen=True)
class SourcePostgres:
    """A second Postgres server, TLS on, that plays an operational database kyma federates."""

    admin_url: str  # the superuser, database ``kyma``
    log_file: Path  # the server log; ``log_statement = 'all'`` puts every statement in it
    ca_file: Path  # the server's self-signed certificate, for ``sslmode=verify-full``
    host: str
    port: int

    def url(self, database: str, user: str, password: str | None = None) -> str:
        """A libpq URL for ``user`` on ``database``; without a password unless one is given.

        >>> SourcePostgres("", Path(), Path(), "127.0.0.1", 5432).url("fed", "app", "p@ss")
        'postgresql://app:p%40ss@127.0.0.1:5432/fed'
        """
        secret = f":{quote(password, safe='')}" if password is not None else ""
        return f"postgresql://{quote(user, safe='')}{secret}@{self.host}:{self.port}/{database}"


@dataclass(frozen=True)
class SourceDatabase:
    """The seeded database ``fed`` (ICU ``en-US`` collation, time zone America/New_York)."""

    url: str  # as the ``app`` login role, without its password: postgresql://app@HOST:PORT/fed
    password: str  # the ``app`` role's password
    admin_url: str  # the superuser, database ``fed``


def run_in_postgres(url: str, sql: str, *, password: str | None = None) -> list[tuple]:
    """The rows of ``sql`` run directly in a fresh session on ``url``.

    The session keeps the database's defaults (time zone America/New_York for ``fed``); pass
    ``password`` when ``url`` has none (``SourceDatabase.url``). char(n) values arrive
    unpadded, as kyma reads them.
    """
    with psycopg.connect(url, password=password, autocommit=True, connect_timeout=10) as conn:
        conn.adapters.register_loader("bpchar", _UnpaddedChar)
        return conn.execute(sql).fetchall()


class _UnpaddedChar(psycopg.adapt.Loader):
    """char(n) values without their trailing blanks, as kyma reads them (and as Postgres
    compares them)."""

    def load(self, data: Buffer) -> str:
        return bytes(data).decode().rstrip(" ")


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


def self_signed_certificate(host: str) -> tuple[bytes, bytes]:
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


def wait_for_tls(url: str, ca_file: Path) -> None:
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
