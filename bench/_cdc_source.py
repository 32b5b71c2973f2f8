"""The CDC benchmark's source database and the kyma connectors and workers on it."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from kyma.connectors.postgres.cdc import CdcWorker, SparkTarget
from kyma.services import Services

SECRET_ENV = "KYMA_SECRET_BENCH_CDC"
ROLE, DATABASE = "bench_cdc", "bench"


@dataclass(frozen=True)
class Source:
    admin_url: str  # the superuser, on the bench database
    url: str  # as ROLE, without its password
    password: str

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.url, password=self.password, autocommit=True)

    def execute(self, text: str) -> list[tuple]:
        with self.connect() as conn:
            cur = conn.execute(text)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def libpq_env(self) -> dict[str, str]:
        parts = urlsplit(self.url)
        return {
            **os.environ,
            "PGHOST": parts.hostname or "127.0.0.1",
            "PGPORT": str(parts.port or 5432),
            "PGUSER": parts.username or ROLE,
            "PGPASSWORD": self.password,
            "PGDATABASE": parts.path.lstrip("/"),
        }


def make_source(admin_url: str) -> Source:
    """A login role with REPLICATION and a database it owns (so it may publish its tables)."""
    password = secrets.token_urlsafe(16)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        (level,) = conn.execute("SHOW wal_level").fetchone()  # type: ignore[misc]
        assert level == "logical", level
        role = sql.SQL("CREATE ROLE {} LOGIN REPLICATION PASSWORD {}")
        conn.execute(role.format(sql.Identifier(ROLE), sql.Literal(password)))
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(*map(sql.Identifier, (DATABASE, ROLE)))
        )
    base = admin_url.rsplit("/", 1)[0]
    host_port = base.rsplit("@", 1)[1]
    return Source(f"{base}/{DATABASE}", f"postgresql://{ROLE}@{host_port}/{DATABASE}", password)


def create_connector(
    services: Services, source: Source, name: str, tables: list[str], **options: Any
) -> None:
    """A mode ``sync`` connector, the default body plus ``options`` in ``sync``; fails if
    kyma disabled it."""
    answer = services.connectors.create(
        {
            "name": name,
            "type": "postgres",
            "mode": "sync",
            "connection": {
                "url": source.url,
                "secret_ref": f"$env:{SECRET_ENV}",
                "tls": "disabled",
                "allow_insecure": True,
            },
            "sync": {"tables": tables, **options},
        }
    )
    assert answer["disabled_reason"] is None, answer


def make_worker(services: Services, name: str) -> CdcWorker:
    """The worker ``kyma serve`` runs for connector ``name`` (with the SparkTarget ``kyma
    serve`` passes to SyncRunner), so tables past ``sync.spark_min_bytes`` snapshot on Spark."""
    return CdcWorker(
        services.stores.connectors.get(name),
        services.connectors.connector(name),  # type: ignore[arg-type]
        services.catalog,
        services.stores.connectors,
        services.stores.cdc,
        services.write_path,
        lambda q: services.query.execute(q).table,
        spark=SparkTarget(
            services.jobs.store, services.settings.block_rows, services.settings.spark_master
        ),
    )


def kyma_rows(services: Services, text: str) -> list[dict[str, Any]]:
    return services.query.execute(text).table.to_pylist()
