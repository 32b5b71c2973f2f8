"""The connector tests' source database ``fed``, seeded once, on the session's second Postgres
(``source_pg`` in ``tests/conftest.py``): a connector reads it as an operational database,
over TLS, as a login role that is not a superuser.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from source_postgres import SourceDatabase, SourcePostgres

SEED = Path(__file__).with_name("source_seed.sql")


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
