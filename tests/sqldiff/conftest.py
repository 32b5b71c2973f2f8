"""The differential tests' two sides, one of each per module: a kyma engine on a fresh
catalog database, and a connection to a fresh Postgres database (time zone UTC)."""

from __future__ import annotations

from collections.abc import Iterator

import corpus
import psycopg
import pytest


@pytest.fixture(scope="module")
def kyma(pg_server_url: str) -> Iterator:  # type: ignore[type-arg]
    with corpus._database(pg_server_url) as catalog_url, corpus._kyma(catalog_url) as run:
        yield run


@pytest.fixture(scope="module")
def postgres(pg_server_url: str) -> Iterator[psycopg.Connection]:
    with corpus._database(pg_server_url) as url, psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        yield conn
