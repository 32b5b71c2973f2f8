"""The source Postgres fixtures are what the connector tests rely on."""

from __future__ import annotations

import stat
from pathlib import Path

import psycopg
import pytest
from source_postgres import SourceDatabase, SourcePostgres, run_in_postgres


def test_tls_verifies_against_the_ca_file(source_pg: SourcePostgres) -> None:
    with psycopg.connect(
        source_pg.admin_url, sslmode="verify-full", sslrootcert=str(source_pg.ca_file)
    ) as conn:
        query = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
        assert conn.execute(query).fetchone() == (True,)
        data_dir = Path(conn.execute("SHOW data_directory").fetchone()[0])
    key = (data_dir / "server.key").stat()
    assert stat.S_IMODE(key.st_mode) == 0o600 and key.st_uid == data_dir.stat().st_uid


def test_app_is_a_plain_role_in_new_york(source_db: SourceDatabase) -> None:
    query = (
        "SELECT current_user, rolsuper, current_setting('TimeZone'), datlocprovider,"
        " daticulocale FROM pg_roles, pg_database"
        " WHERE rolname = current_user AND datname = current_database()"
    )
    rows = run_in_postgres(source_db.url, query, password=source_db.password)
    assert rows == [("app", False, "America/New_York", "i", "en-US")]
    with pytest.raises(psycopg.OperationalError, match="password"):
        run_in_postgres(source_db.url, "SELECT 1")


def test_statements_reach_the_log_and_pg_stat_statements(
    source_pg: SourcePostgres, source_db: SourceDatabase
) -> None:
    marker = "SELECT count(*) AS statement_marker_4711 FROM public.users"
    assert run_in_postgres(source_db.url, marker, password=source_db.password) == [(50,)]
    assert marker in source_pg.log_file.read_text()
    counted = "SELECT calls FROM pg_stat_statements WHERE query LIKE '%statement_marker_4711%'"
    assert run_in_postgres(source_db.admin_url, counted) == [(1,)]
