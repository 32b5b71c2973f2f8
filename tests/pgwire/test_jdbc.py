"""The Postgres JDBC driver (Debian's libpostgresql-jdbc-java, installed by scripts/setup.sh)
against a real ``kyma serve``: DatabaseMetaData as schema browsers (DBeaver…) call it, a
prepared query past the driver's prepare threshold, errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pgwire_serve import LONG_QUERY, PgServe

PROGRAM = Path(__file__).parent / "jdbc" / "KymaJdbc.java"
DRIVER = Path("/usr/share/java/postgresql.jar")


def jdbc(pg: PgServe, token: str, *cancel: str) -> list[str]:
    assert DRIVER.exists(), "run scripts/setup.sh (libpostgresql-jdbc-java)"
    java = shutil.which("java") or "java"
    done = subprocess.run(
        [java, "-cp", str(DRIVER), str(PROGRAM), str(pg.port), token, *cancel],
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
