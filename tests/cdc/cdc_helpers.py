"""What the CDC tests share: the source database, a connector on it, and comparisons."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa

SECRET_ENV = "KYMA_SECRET_TEST_CDC"


@dataclass(frozen=True)
class CdcSource:
    url: str  # as the role ``cdc``, without its password
    password: str
    admin_url: str  # the superuser, on this database

    def execute(self, sql: str, params: Any = None) -> list[tuple]:
        with psycopg.connect(self.url, password=self.password, autocommit=True) as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def admin(self, sql: str, params: Any = None) -> list[tuple]:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []


def body(source: CdcSource, tables: list[str], mode: str = "both", name: str = "pg") -> dict:
    return {
        "name": name,
        "type": "postgres",
        "mode": mode,
        "connection": {
            "url": source.url,
            "secret_ref": f"$env:{SECRET_ENV}",
            "tls": "disabled",
            "allow_insecure": True,
        },
        "sync": {"tables": tables},
    }


def make_worker(services, name: str = "pg", **kwargs):  # type: ignore[no-untyped-def]
    """A CDC worker for connector ``name``, driven step by step by the test."""
    from kyma.connectors.postgres.cdc import CdcWorker

    record = services.stores.connectors.get(name)
    return CdcWorker(
        record,
        services.connectors.connector(name),
        services.catalog,
        services.stores.connectors,
        services.stores.cdc,
        services.write_path,
        lambda q: services.query.execute(q).table,
        **kwargs,
    )


def drain(w, timeout: float = 30.0) -> int:  # type: ignore[no-untyped-def]
    """Step until a peek finds nothing new; the transactions applied."""
    deadline = time.monotonic() + timeout
    total = 0
    while time.monotonic() < deadline:
        n = w.step()
        if n == 0:
            return total
        total += n
    raise TimeoutError(f"the slot still had changes after {timeout}s")


def kyma(services, sql: str) -> pa.Table:  # type: ignore[no-untyped-def]
    return services.query.execute(sql).table


def equal_both_ways(services, table: str) -> None:  # type: ignore[no-untyped-def]
    """The synced table holds what ``live()`` reads from the source, and nothing else."""
    for left, right in ((table, f"live({table})"), (f"live({table})", table)):
        diff = kyma(services, f"SELECT * FROM {left} EXCEPT SELECT * FROM {right}")
        assert diff.num_rows == 0, diff.to_pylist()[:5]


def rows(table: pa.Table) -> list[tuple]:
    names = table.column_names
    return sorted(tuple(r[n] for n in names) for r in table.to_pylist())


def wait_until(check, timeout: float = 30.0):  # type: ignore[no-untyped-def]
    """Poll ``check`` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(f"not true after {timeout}s")


def cdc_sync_process(catalog_url: str, objects: Path, log: Path, **env: str) -> subprocess.Popen:
    """``kyma cdc-sync --connector pg`` on the test's catalog and store, in a session of its
    own (so a Spark JVM it starts can be killed with it), output appended to ``log``."""
    environment = {
        **os.environ,
        "KYMA_HOME": tempfile.mkdtemp(prefix="kyma-cdc-", dir="/tmp"),
        "KYMA_CATALOG_URL": catalog_url,
        "KYMA_OBJECT_STORE": f"file://{objects.absolute()}",
        **env,
    }
    with log.open("a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "kyma", "cdc-sync", "--connector", "pg"],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
