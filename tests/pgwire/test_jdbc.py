"""The Postgres JDBC driver (Debian's libpostgresql-jdbc-java, installed by scripts/setup.sh)
against a real ``kyma serve``: DatabaseMetaData as schema browsers (DBeaver…) call it, each
call answering as on a real Postgres holding the same table and view, a prepared query past
the driver's prepare threshold, errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import psycopg
from pgwire_serve import LONG_QUERY, PgServe

PROGRAM = Path(__file__).parent / "jdbc" / "KymaJdbc.java"
DRIVER = Path("/usr/share/java/postgresql.jar")


def jdbc(pg: PgServe | None, *args: str) -> list[str]:
    """KymaJdbc's lines: against ``pg`` with a token (and a long query to cancel), or with
    ``pg`` None, its ``meta`` mode's arguments."""
    assert DRIVER.exists(), "run scripts/setup.sh (libpostgresql-jdbc-java)"
    java = shutil.which("java") or "java"
    port = [str(pg.port)] if pg is not None else []
    done = subprocess.run(
        [java, "-cp", str(DRIVER), str(PROGRAM), *port, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_jdbc_browses_the_schema_and_queries(pg: PgServe) -> None:
    lines = jdbc(pg, pg.tokens["admin"])
    assert "table events" in lines
    columns = [line for line in lines if line.startswith("column ")]
    assert columns[2:] == [
        "column n int8",
        "column msg text",
        "column ts timestamptz",
        "column attrs jsonb",
        "column emb _float4",
    ]
    assert [line for line in lines if line.startswith("row ")] == [
        "row 2|it's|2024-05-01T12:00:01Z|42",
        "row 3|null|2024-05-02T00:00:00Z|null",
    ]
    assert "error 42P01" in lines


def test_jdbc_with_a_bad_token_is_refused(pg: PgServe) -> None:
    lines = jdbc(pg, "kyma_wrong")
    assert len(lines) == 1 and lines[0].startswith("connect 28P01")
    assert "unknown token" in lines[0]


def test_jdbc_query_timeout_cancels_the_query(pg: PgServe) -> None:
    """``setQueryTimeout`` makes the driver send a cancel request: the statement stops with
    57014 well before its minutes of work, and the connection answers the next query."""
    lines = jdbc(pg, pg.tokens["admin"], LONG_QUERY)
    cancelled, after = lines
    assert cancelled.startswith("cancelled 57014 after ")
    assert int(cancelled.rsplit(" ", 2)[1]) < 15
    assert after == "after 3"


VIEW = "CREATE VIEW recent AS SELECT n, msg FROM events WHERE n > 1"
# events as kyma makes it (conftest.py, with the columns every table has), in Postgres' types
ORACLE = [
    "CREATE TABLE events (_timestamp timestamptz, props jsonb,"
    " n bigint, msg text, ts timestamptz, attrs jsonb, emb real[])",
    VIEW,
]


def test_database_metadata_answers_as_postgres(pg: PgServe, module_catalog_url: str) -> None:
    """getSchemas, getTables, getPrimaryKeys, getImportedKeys, getExportedKeys, getIndexInfo
    and getColumns (DBeaver's navigator and references tab) for a table and a view: every row
    as Postgres answers for the same (kyma has no keys or indexes; neither have these)."""
    with pg.connect(autocommit=True) as conn:
        conn.execute(VIEW)
    with psycopg.connect(module_catalog_url, autocommit=True) as conn:
        for statement in ORACLE:
            conn.execute(statement)
    kyma = jdbc(
        None, "meta", f"jdbc:postgresql://127.0.0.1:{pg.port}/kyma", "kyma", pg.tokens["admin"]
    )
    oracle = urlparse(module_catalog_url)
    url = f"jdbc:postgresql://{oracle.hostname}:{oracle.port}{oracle.path}"
    postgres = jdbc(None, "meta", url, oracle.username or "", oracle.password or "")
    assert kyma == postgres
    assert " |null|public|recent|VIEW|null|||||" in kyma
