"""Real parts for the tests, started on loopback: Postgres (the catalog's, and a second one,
TLS on, that connectors read as a source) and an S3-compatible server.

``KYMA_TEST_CATALOG_URL`` points the tests at an external Postgres instead of one started
from the system's binaries. Nothing here skips: a missing binary fails with the command
that installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings
from loopback import make_s3_store, server_tmpdir, wait_for_port
from serve_helpers import free_port
from source_postgres import (
    HOST,
    SETTINGS,
    SourcePostgres,
    self_signed_certificate,
    wait_for_tls,
)

from kyma.engine.catalog import PostgresCatalog
from kyma.engine.storage import ObjectStore
from kyma.engine.storage.local import LocalStore
from kyma.engine.storage.s3 import S3Store
from kyma.stores import Stores


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of a Postgres server for the whole session (an admin connection)."""
    external = os.environ.get("KYMA_TEST_CATALOG_URL")
    if external:
        yield external
        return
    from kyma.runtime.postgres import EmbeddedPostgres

    home = server_tmpdir("kyma-test-pg-")
    pg = EmbeddedPostgres(home / "catalog", log=lambda _: None)
    try:
        yield pg.start()
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@contextmanager
def fresh_database(pg_server_url: str, template: str = "template1") -> Iterator[str]:
    """The URL of a new database on the server, a copy of ``template`` (by default an empty
    one), dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    base, _, _ = pg_server_url.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def migrated_template(pg_server_url: str) -> Iterator[str]:
    """The name of a database holding kyma's catalog schema and nothing else: every
    migration applied once for the session instead of once per test."""
    with fresh_database(pg_server_url) as url:
        Stores.open(url).close()
        yield url.rpartition("/")[2]


@pytest.fixture
def catalog_url(pg_server_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database for one test: empty, or, for a test that opens ``stores`` on it, a
    copy of ``migrated_template`` (what opening the stores would first make of it)."""
    template = "template1"
    if "stores" in request.fixturenames:
        template = request.getfixturevalue("migrated_template")
    with fresh_database(pg_server_url, template) as url:
        yield url


@pytest.fixture(scope="module")
def module_catalog_url(pg_server_url: str) -> Iterator[str]:
    """A fresh, empty database for one module's tests (for a server the module shares)."""
    with fresh_database(pg_server_url) as url:
        yield url


@pytest.fixture(scope="module")
def module_serve_catalog_url(pg_server_url: str) -> Iterator[str]:
    """A fresh, empty database for the catalog of the ``kyma serve`` a module shares (apart
    from ``module_catalog_url``, which the module's tests may fill as they like)."""
    with fresh_database(pg_server_url) as url:
        yield url


@pytest.fixture
def stores(catalog_url: str) -> Iterator[Stores]:
    """The catalog database of a fresh database, with every store on it."""
    opened = Stores.open(catalog_url)
    yield opened
    opened.close()


@pytest.fixture
def catalog(stores: Stores) -> PostgresCatalog:
    return stores.catalog


@pytest.fixture(scope="session")
def source_pg() -> Iterator[SourcePostgres]:
    """A second Postgres for the session: TLS with a self-signed certificate for 127.0.0.1."""
    from kyma.runtime.postgres import EmbeddedPostgres

    home = server_tmpdir("kyma-test-source-")
    pg = EmbeddedPostgres(home / "source", log=lambda _: None, settings=SETTINGS)
    try:
        admin_url = pg.start()
        certificate, key = self_signed_certificate(HOST)
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
        wait_for_tls(admin_url, ca_file)
        port = int(admin_url.rsplit(":", 1)[1].split("/")[0])
        yield SourcePostgres(admin_url, pg.log_file, ca_file, HOST, port)
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3-compatible server in its own process on loopback."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3_store(s3_endpoint: str, tmp_path: Path) -> S3Store:
    """An S3Store on a fresh bucket of the session's moto server."""
    return make_s3_store(s3_endpoint, tmp_path / "cache")


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Every object-store behaviour test runs on the local folder and on S3."""
    if request.param == "local":
        return LocalStore(tmp_path / "objects")
    return make_s3_store(request.getfixturevalue("s3_endpoint"), tmp_path / "cache")


@pytest.fixture
def local_store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


# CI draws the same examples every run (a deterministic suite); `make soak` explores.
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True)
settings.register_profile("soak", max_examples=5_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# `kyma serve` compacts a table's small extents within seconds of a commit. Tests that count
# extents, or the extents a query pruned, would race it, so every server the suite starts runs
# without it unless its test turns it on (tests/ops/test_background_compaction.py does).
os.environ["KYMA_COMPACTION_INTERVAL_SECONDS"] = "0"


@pytest.fixture
def services(stores: Stores, tmp_path: Path):
    """The server's parts, wired as ``kyma serve`` wires them, on a fresh catalog database
    and a local object store."""
    from kyma.services import wire_services
    from kyma.settings import Settings

    settings = Settings(
        home=tmp_path / "home",
        catalog_url=stores.catalog.url,
        block_rows=1024,
        idempotency_wait_seconds=5,
    )
    services = wire_services(settings, stores, LocalStore(tmp_path / "objects"))
    yield services
    services.close()


@pytest.fixture
def client(services):
    from kyma.server import create_app

    return create_app(services).test_client()


@pytest.fixture(scope="session")
def spark() -> Iterator:  # type: ignore[type-arg]
    """A small local Spark: 2 cores, 4 shuffle partitions, no UI, 1 GiB of driver memory.

    Python data sources run with filter pushdown (``spark.sql.python.filterPushdown``);
    the session time zone is UTC, so timestamps print and compare as kyma stores them.
    """
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kyma-tests")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.python.daemon.module", "kyma.ingest.load.spark_daemon")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
