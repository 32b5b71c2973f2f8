"""The CDC tests' source: a real Postgres on loopback with ``wal_level = logical``.

Each test gets a fresh database owned by a login role with REPLICATION (it owns the tables,
so it may publish them); slots left on it are dropped with it.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from cdc_helpers import SECRET_ENV, CdcSource, make_worker
from psycopg import sql

from kyma.runtime.postgres import EmbeddedPostgres

SETTINGS = """
# Added by kyma's CDC tests.
wal_level = logical
max_replication_slots = 32
max_wal_senders = 16
"""


@pytest.fixture(scope="session")
def cdc_server() -> Iterator[tuple[str, str]]:
    """(superuser URL, password of the role ``cdc``) of a Postgres with logical WAL."""
    home = Path(tempfile.mkdtemp(prefix="kyma-test-cdc-", dir="/tmp"))
    pg = EmbeddedPostgres(home / "source", log=lambda _: None, settings=SETTINGS)
    try:
        admin_url = pg.start()
        password = secrets.token_urlsafe(16)
        with psycopg.connect(admin_url, autocommit=True) as conn:
            (level,) = conn.execute("SHOW wal_level").fetchone()  # type: ignore[misc]
            assert level == "logical"
            role = sql.SQL("CREATE ROLE cdc LOGIN REPLICATION PASSWORD {}")
            conn.execute(role.format(sql.Literal(password)))
        yield admin_url, password
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def cdc_source(cdc_server: tuple[str, str], monkeypatch) -> Iterator[CdcSource]:  # type: ignore[no-untyped-def]
    """A fresh database; the role's password is in SECRET_ENV, where connectors' secret_ref
    points (see cdc_helpers.body)."""
    admin_url, password = cdc_server
    monkeypatch.setenv(SECRET_ENV, password)
    name = f"src_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" OWNER cdc')
    base = admin_url.rsplit("/", 1)[0]
    host_port = base.rsplit("@", 1)[1]
    source = CdcSource(f"postgresql://cdc@{host_port}/{name}", password, f"{base}/{name}")
    yield source
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for (slot,) in conn.execute(
            "SELECT slot_name FROM pg_replication_slots WHERE database = %s", (name,)
        ).fetchall():
            conn.execute(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                " WHERE slot_name = %s AND active_pid IS NOT NULL",
                (slot,),
            )
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def worker(services):  # type: ignore[no-untyped-def]
    """Makes CDC workers for a connector, driven step by step by the test; closed after."""
    made = []

    def make(name: str = "pg", **kwargs):  # type: ignore[no-untyped-def]
        made.append(make_worker(services, name, **kwargs))
        return made[-1]

    yield make
    for each in made:
        each.close()
