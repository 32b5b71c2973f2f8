"""``psql`` (the Postgres 15 client on this machine) against a real ``kyma serve``; its
describe commands answer as they answer on a real Postgres holding the same table and view."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from pgwire_serve import LONG_QUERY, PgServe

from kyma.runtime.postgres import find_pg_bin_dir


def psql(
    pg: PgServe | str, sql: str, token: str | None, *flags: str
) -> subprocess.CompletedProcess[str]:
    """``sql`` run by psql (unaligned, tuples only unless ``flags`` say otherwise) against
    ``pg`` or a connection string."""
    env = {**os.environ, "PGPASSWORD": token or "", "PGCONNECT_TIMEOUT": "10"}
    return subprocess.run(
        [str(find_pg_bin_dir() / "psql"), "-X", "-A", *(flags or ("-t",))]
        + ["-v", "ON_ERROR_STOP=1", "-d", pg if isinstance(pg, str) else pg.dsn(), "-c", sql],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_psql_runs_a_query(pg: PgServe) -> None:
    done = psql(pg, "SELECT n, msg, attrs FROM events ORDER BY n", pg.tokens["admin"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '1|GET /|{"http":{"method":"GET"},"tags":["a","b"]}',
        "2|it's|42",
        "3||",
    ]


def test_psql_runs_several_statements_and_reports_errors(pg: PgServe) -> None:
    done = psql(pg, "SELECT 1 AS a; SELECT count(*) AS c FROM events", pg.tokens["admin"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["1", "3"]
    failed = psql(pg, "SELECT * FROM missing_table", pg.tokens["admin"])
    assert failed.returncode == 1
    assert "ERROR:" in failed.stderr and "missing_table" in failed.stderr


def test_psql_with_a_bad_token_is_refused(pg: PgServe) -> None:
    refused = psql(pg, "SELECT 1", "kyma_wrong")
    assert refused.returncode == 2
    assert "unknown token" in refused.stderr


def test_psql_copies_a_query_to_a_csv_file(pg: PgServe, tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "events.csv"
    copy = f"\\copy (SELECT n, msg, attrs FROM events ORDER BY n) TO '{target}' WITH CSV HEADER"
    done = psql(pg, copy, pg.tokens["admin"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "COPY 3"
    assert target.read_text().splitlines() == [
        "n,msg,attrs",
        '1,GET /,"{""http"":{""method"":""GET""},""tags"":[""a"",""b""]}"',
        "2,it's,42",
        "3,,",
    ]


def test_psql_copies_a_csv_file_into_a_table(pg: PgServe, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "loaded.csv"
    source.write_text('n,label\n1,"a, quoted"\n2,\n3,plain\n')
    create = psql(pg, "CREATE TABLE loaded (n long, label string)", pg.tokens["admin"])
    assert create.returncode == 0, create.stderr
    try:
        copy = f"\\copy loaded (n, label) FROM '{source}' WITH (FORMAT csv, HEADER)"
        done = psql(pg, copy, pg.tokens["admin"])
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "COPY 3"
        read = psql(pg, "SELECT n, label IS NULL, label FROM loaded ORDER BY n", pg.tokens["admin"])
        assert read.stdout.splitlines() == ["1|f|a, quoted", "2|t|", "3|f|plain"]
        source.write_text("n,label\n4,x\nfive,y\n")
        bad = psql(pg, copy, pg.tokens["admin"])
        assert bad.returncode == 1
        assert "line 3, column n" in bad.stderr, bad.stderr
        count = psql(pg, "SELECT count(*) FROM loaded", pg.tokens["admin"])
        assert count.stdout.strip() == "3"  # nothing of the bad file was committed
    finally:
        psql(pg, "DROP TABLE loaded", pg.tokens["admin"])


def test_psql_lists_tables_the_token_may_read(pg: PgServe) -> None:
    for pattern in ("\\dt", "\\dt ev*"):
        done = psql(pg, pattern, pg.tokens["admin"])
        assert done.returncode == 0, done.stderr
        assert "public|events|table|kyma" in done.stdout.splitlines()
    hidden = psql(pg, "\\dt", pg.tokens["read_other"])
    assert hidden.returncode == 0, hidden.stderr
    assert "events" not in hidden.stdout + hidden.stderr


def test_psql_describes_a_table(pg: PgServe) -> None:
    done = psql(pg, "\\d events", pg.tokens["admin"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for row in (
        "n|bigint|||",
        "msg|text|||",
        "ts|timestamp with time zone|||",
        "attrs|jsonb|||",
        "emb|real[]|||",
    ):
        assert row in lines, done.stdout
    missing = psql(pg, "\\d no_such_table", pg.tokens["admin"])
    assert 'Did not find any relation named "no_such_table"' in missing.stderr


def test_psql_lists_relations_and_databases(pg: PgServe) -> None:
    relations = psql(pg, "\\d", pg.tokens["admin"])
    assert relations.returncode == 0, relations.stderr
    assert "public|events|table|kyma" in relations.stdout.splitlines()
    databases = psql(pg, "\\l", pg.tokens["admin"])
    assert databases.returncode == 0, databases.stderr
    assert databases.stdout.splitlines()[0].startswith("kyma|kyma|UTF8|C.UTF-8|C.UTF-8|")


def test_psql_reads_server_functions_and_settings(pg: PgServe) -> None:
    sql = (
        "SELECT version(); SELECT current_schema();"
        " SELECT setting FROM pg_catalog.pg_settings WHERE name = 'TimeZone'"
    )
    done = psql(pg, sql, pg.tokens["admin"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("PostgreSQL 15.0 (kyma ") and lines[1:] == ["public", "UTC"]


def test_psql_ctrl_c_cancels_a_long_query(pg: PgServe) -> None:
    """Ctrl-C (SIGINT) in psql sends the cancel request; the statement stops at once."""
    env = {**os.environ, "PGPASSWORD": pg.tokens["admin"], "PGCONNECT_TIMEOUT": "10"}
    command = [str(find_pg_bin_dir() / "psql"), "-X", "-d", pg.dsn(), "-c", LONG_QUERY]
    started = time.monotonic()
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as running:
        time.sleep(1.5)
        running.send_signal(signal.SIGINT)
        _, stderr = running.communicate(timeout=30)
    assert time.monotonic() - started < 15
    assert running.returncode == 1
    assert "canceling statement due to user request" in stderr


VIEW = "CREATE VIEW recent AS SELECT n, msg FROM events WHERE n > 1"
# events as kyma makes it (conftest.py, with the columns every table has), in Postgres' types
ORACLE = [
    "CREATE TABLE events (_timestamp timestamptz, props jsonb,"
    " n bigint, msg text, ts timestamptz, attrs jsonb, emb real[])",
    VIEW,
]


@pytest.fixture(scope="module")
def described(pg: PgServe, module_catalog_url: str) -> tuple[PgServe, str]:
    """kyma with the view ``recent`` too, and a Postgres database holding the same."""
    with pg.connect(autocommit=True) as conn:
        conn.execute(VIEW)
    with psycopg.connect(module_catalog_url, autocommit=True) as conn:
        for statement in ORACLE:
            conn.execute(statement)
    return pg, module_catalog_url


@pytest.mark.parametrize(
    "command", ["\\d", "\\dt", "\\dv", "\\d events", "\\d+ events", "\\df", "\\dn"]
)
def test_psql_describes_as_postgres(described: tuple[PgServe, str], command: str) -> None:
    pg, oracle = described
    kyma = psql(pg, command, pg.tokens["admin"], "-P", "footer=on")
    postgres = psql(oracle, command, None, "-P", "footer=on")
    assert kyma.returncode == 0, kyma.stderr
    assert (kyma.stdout, kyma.stderr) == (postgres.stdout, postgres.stderr)


def test_psql_describes_a_view_and_lists_the_database(described: tuple[PgServe, str]) -> None:
    """A view's columns as Postgres lists them; its definition is the query as written (Postgres
    prints its own deparsed form). ``\\l`` lists kyma's one database as Postgres lists it."""
    pg, oracle = described
    kyma = psql(pg, "\\d+ recent", pg.tokens["admin"], "-P", "footer=on")
    postgres = psql(oracle, "\\d+ recent", None, "-P", "footer=on")
    assert kyma.returncode == 0, kyma.stderr
    definition = kyma.stdout.index("View definition:")
    assert kyma.stdout[:definition] == postgres.stdout[: postgres.stdout.index("View definition:")]
    assert kyma.stdout[definition:].splitlines()[1] == "SELECT n, msg FROM events WHERE n > 1"
    for command in ("\\l", "\\l+", "\\dt+", "\\dn+", "\\du", "\\dT"):
        listed = psql(pg, command, pg.tokens["admin"])
        assert listed.returncode == 0, (command, listed.stderr)
    kyma_db = psql(pg, "\\l", pg.tokens["admin"]).stdout.splitlines()
    postgres_db = psql(oracle, "\\l", None).stdout.splitlines()
    assert kyma_db == [line for line in postgres_db if line.startswith("kyma|")]


COPIED = {  # the same table in kyma and in Postgres' types
    "kyma": "CREATE TABLE copied (n long, msg string, ts timestamp, ok bool, r real)",
    "postgres": "CREATE TABLE copied (n bigint, msg text, ts timestamptz, ok boolean, r float8)",
}
# Text format as psql sends it from a pipe: escapes, NULLs, then the end-of-data line and
# something after it that is not data.
COPY_IN = (
    "1\tGET /\\ttab\t2024-05-01 12:00:00.5+00\tt\t1.25\n"
    "2\tit's \\\\ back\\nslash\t\\N\tf\t\\N\n"
    "3\t\\N\t2024-05-02 00:00:00+00\t\\N\t-0.5\n"
    "\\.\n"
    "4\tnot data\n"
)


def _copy_round_trip(
    target: PgServe | str, token: str | None, folder: Path
) -> list[tuple[str, str, str]]:
    """``\\copy`` from a pipe, then the rows out to files in text and CSV: each step's
    psql output and the files' bytes."""
    folder.mkdir()
    columns = "copied (n, msg, ts, ok, r)"
    query = "SELECT n, msg, ts, ok, r FROM copied ORDER BY n"
    steps = [
        (f"\\copy {columns} FROM STDIN", COPY_IN),
        (f"\\copy {columns} TO '{folder}/table.txt'", ""),
        (f"\\copy ({query}) TO '{folder}/query.csv' CSV HEADER", ""),
        (f"\\copy {columns} TO '{folder}/table.csv' WITH (FORMAT csv, NULL 'null')", ""),
    ]
    seen = []
    for command, data in steps:
        env = {**os.environ, "PGPASSWORD": token or "", "PGTZ": "UTC"}
        dsn = target if isinstance(target, str) else target.dsn()
        done = subprocess.run(
            [str(find_pg_bin_dir() / "psql"), "-X", "-A", "-t", "-d", dsn, "-c", command],
            input=data,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        seen.append((command.replace(str(folder), "."), done.stdout, done.stderr))
    return seen + [(p.name, p.read_text(), "") for p in sorted(folder.iterdir())]


def test_psql_copy_in_and_out_as_postgres(described: tuple[PgServe, str], tmp_path: Path) -> None:
    pg, oracle = described
    with pg.connect(autocommit=True) as conn:
        conn.execute(COPIED["kyma"])
    with psycopg.connect(oracle, autocommit=True) as conn:
        conn.execute(COPIED["postgres"])
    kyma = _copy_round_trip(pg, pg.tokens["admin"], tmp_path / "kyma")
    postgres = _copy_round_trip(oracle, None, tmp_path / "postgres")
    assert kyma == postgres
    assert kyma[0][1:] == ("COPY 3\n", "")  # the line after the end-of-data line is not data


def test_psql_describes_real_columns_as_postgres(described: tuple[PgServe, str]) -> None:
    pg, oracle = described
    ddl = "CREATE TABLE floats (r real, f float4, p float(24), d double precision, q float(25))"
    with pg.connect(autocommit=True) as conn:
        conn.execute(ddl)
    with psycopg.connect(oracle, autocommit=True) as conn:
        conn.execute(ddl.replace("(r real", "(_timestamp timestamptz, props jsonb, r real"))
    kyma = psql(pg, "\\d floats", pg.tokens["admin"], "-P", "footer=on")
    postgres = psql(oracle, "\\d floats", None, "-P", "footer=on")
    assert kyma.returncode == 0, kyma.stderr
    assert kyma.stdout == postgres.stdout
