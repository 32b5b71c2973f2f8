"""Session statements against Postgres as the oracle: the same script on a kyma connection
and on a real Postgres 15 gives the same rows, or errors with the same SQLSTATE — SET/SHOW/
RESET of the settings drivers send (time units, SET LOCAL, a block's ROLLBACK), unknown
parameters (42704), savepoints (25P01 outside a block, 3B001 for a missing one, recovery of
a failed block by ROLLBACK TO). Then what kyma refuses where Postgres would not: savepoints
around a write, LISTEN/NOTIFY (0A000, naming the statement).

SQL prepared statements (what psql users type) the same way: PREPARE with and without
parameter types, EXECUTE of a query and an INSERT, an unknown name (26000), a name taken
(42P05), the wrong number of arguments (42601), DEALLOCATE [PREPARE] name | ALL, quoted names
and a failed block (25P02); over HTTP, where no session keeps them, refused in words."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest
from pgwire_serve import PgServe, run_script
from serve_helpers import request

TIMES = [
    "SET statement_timeout = '1s'",
    "SHOW statement_timeout",
    "SET statement_timeout = 1000",
    "SHOW statement_timeout",
    "SET statement_timeout = '500ms'",
    "SHOW statement_timeout",
    "SET statement_timeout TO '2min'",
    "SHOW statement_timeout",
    "SET statement_timeout = '1.5s'",
    "SHOW statement_timeout",
    "SET statement_timeout = 90000",
    "SHOW statement_timeout",
    "SET statement_timeout = 0",
    "SHOW statement_timeout",
    "SET statement_timeout = '3h'",
    "RESET statement_timeout",
    "SHOW statement_timeout",
    "SET statement_timeout TO DEFAULT",
    "SHOW statement_timeout",
    "SET statement_timeout = 'soon'",
    "SET statement_timeout = '-1'",
    "SET lock_timeout = '3s'",
    "SHOW lock_timeout",
    "SET idle_in_transaction_session_timeout = '1min'",
    "SHOW idle_in_transaction_session_timeout",
    "SET idle_session_timeout = 60000",
    "SHOW idle_session_timeout",
    "SELECT current_setting('statement_timeout')",
]
LOCAL = [
    "SET statement_timeout = '5s'",
    "BEGIN",
    "SET LOCAL statement_timeout = '2s'",
    "SHOW statement_timeout",
    "COMMIT",
    "SHOW statement_timeout",
    "SET LOCAL statement_timeout = '3s'",  # outside a block: no effect
    "SHOW statement_timeout",
    "BEGIN",
    "SET application_name = 'in a block'",
    "ROLLBACK",
    "SHOW application_name",
    "BEGIN",
    "SET application_name = 'committed'",
    "SET LOCAL statement_timeout = '7s'",
    "COMMIT",
    "SHOW application_name",
    "SHOW statement_timeout",
]
DRIVER_SETTINGS = [
    "SET client_encoding = 'UTF8'",
    "SHOW client_encoding",
    "SET DateStyle = 'ISO, MDY'",
    "SHOW DateStyle",
    "SET TIME ZONE 'UTC'",
    "SHOW TimeZone",
    "SET extra_float_digits = 3",
    "SHOW extra_float_digits",
    "SET standard_conforming_strings = on",
    "SHOW standard_conforming_strings",
    "SET IntervalStyle = 'postgres'",
    "SHOW IntervalStyle",
    "SET default_transaction_isolation = 'read committed'",
    "SHOW default_transaction_isolation",
    "SHOW transaction isolation level",
    "SET application_name = 'kyma tests'",
    "SHOW application_name",
    "RESET application_name",
    "SHOW application_name",
    "SET no_such_setting = 1",
    "SHOW no_such_setting",
    "RESET no_such_setting",
    "SELECT current_setting('no_such_setting')",
    "SET server_version = '9.6'",
    "SET myapp.tenant = 'acme'",  # custom settings: a dotted name
    "SHOW myapp.tenant",
    "BEGIN",
    "SET myapp.other = 'x'",
    "ROLLBACK",
    "SHOW myapp.other",
    "RESET ALL",
    "SHOW myapp.tenant",
    "SHOW myapp.never",
]
SAVEPOINTS = [
    "SAVEPOINT a",
    "RELEASE SAVEPOINT a",
    "ROLLBACK TO SAVEPOINT a",
    "BEGIN",
    "SAVEPOINT a",
    "SELECT 1",
    "SAVEPOINT b",
    "RELEASE b",
    "ROLLBACK TO SAVEPOINT b",  # gone: 3B001, and the block fails
    "SELECT 1",  # 25P02
    "SAVEPOINT c",  # 25P02
    "ROLLBACK TO a",  # recovers the block
    "SELECT 2",
    "SET application_name = 'after a'",
    'SAVEPOINT "Mixed"',
    "SET application_name = 'after Mixed'",
    'ROLLBACK TRANSACTION TO SAVEPOINT "Mixed"',
    "SHOW application_name",
    "ROLLBACK TO mixed",  # names are case-sensitive when quoted: 3B001
    "ROLLBACK TO a",
    "SHOW application_name",
    'RELEASE "Mixed"',  # ROLLBACK TO a dropped it
    "ABORT",
    "SHOW application_name",
]


@pytest.mark.parametrize(
    "script",
    [TIMES, LOCAL, DRIVER_SETTINGS, SAVEPOINTS],
    ids=["times", "local", "driver_settings", "savepoints"],
)
def test_session_statements_answer_as_postgres(
    pg: PgServe, postgres: psycopg.Connection, script: list[str]
) -> None:
    with pg.connect(autocommit=True) as conn:
        assert run_script(conn, script) == run_script(postgres, script)


def test_show_all_lists_the_settings(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        cur = conn.execute("SHOW ALL")
        assert [c.name for c in cur.description or []] == ["name", "setting", "description"]
        settings = {name: setting for name, setting, _ in cur.fetchall()}
    for name in ("statement_timeout", "TimeZone", "search_path", "application_name"):
        assert name in settings, sorted(settings)


def test_psycopg_nested_transactions_use_savepoints(pg: PgServe) -> None:
    with pg.connect() as conn:
        with conn.transaction(), conn.transaction():  # SAVEPOINT "_pg3_1" … RELEASE
            assert conn.execute("SELECT 1").fetchall() == [(1,)]
        with conn.transaction(), pytest.raises(psycopg.errors.InvalidSavepointSpecification):
            conn.execute("ROLLBACK TO SAVEPOINT nowhere")
        with conn.transaction():  # a failed inner block rolls back to its savepoint
            with pytest.raises(psycopg.Error, match="(?i)divi"), conn.transaction():
                conn.execute("SELECT 1 / 0").fetchall()
            assert conn.execute("SELECT 2").fetchall() == [(2,)]


def test_savepoints_around_a_write_and_notifications_are_refused_in_words(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS savepoint_writes (n long)")
        for script, statement in (
            (["BEGIN", "INSERT INTO savepoint_writes VALUES (1)", "SAVEPOINT a"], "SAVEPOINT a"),
            (
                [
                    "BEGIN",
                    "SAVEPOINT a",
                    "INSERT INTO savepoint_writes VALUES (2)",
                    "ROLLBACK TO a",
                ],
                "ROLLBACK TO SAVEPOINT a",
            ),
        ):
            for sql in script[:-1]:
                conn.execute(sql)
            with pytest.raises(psycopg.errors.FeatureNotSupported, match=statement):
                conn.execute(script[-1])
            with pytest.raises(psycopg.errors.FeatureNotSupported, match="writes.*stay"):
                conn.execute("ROLLBACK")  # ends the block; Postgres would undo the INSERT
            assert conn.execute("SELECT 1").fetchall() == [(1,)]  # out of the block
        for sql, verb in (
            ("LISTEN jobs", "LISTEN"),
            ("UNLISTEN *", "UNLISTEN"),
            ("NOTIFY jobs, 'done'", "NOTIFY"),
        ):
            with pytest.raises(psycopg.errors.FeatureNotSupported, match=f"^{verb} is not"):
                conn.execute(sql)


PREPARED = [
    "PREPARE since (bigint) AS SELECT n, msg FROM prep_rows WHERE n >= $1 ORDER BY n",
    "EXECUTE since (2)",
    "EXECUTE since(1)",
    "EXECUTE since ('3')",
    "PREPARE since AS SELECT 1",  # 42P05
    "EXECUTE nope",  # 26000
    "EXECUTE since",  # 42601: wrong number of parameters
    "EXECUTE since (1, 2)",  # 42601
    "PREPARE one AS SELECT 1 AS one",
    "EXECUTE one (1, 'ignored')",  # no parameters: arguments are not read
    "PREPARE add2 AS SELECT $1::int + $2::int AS total",
    "EXECUTE add2 (40, 2)",
    "EXECUTE add2 (40 * 2, -1)",
    "PREPARE said (text) AS SELECT count(*) AS c FROM prep_rows WHERE msg = $1",
    "EXECUTE said ('it''s')",
    "EXECUTE said ('$1')",
    "PREPARE put (bigint, text) AS INSERT INTO prep_rows (n, msg) VALUES ($1, $2)",
    "EXECUTE put (7, 'seven')",
    "EXECUTE since (7)",
    "PREPARE \"Mixed\" AS SELECT 'mixed' AS m",
    'EXECUTE "Mixed"',
    "EXECUTE mixed",  # 26000: quoted names keep their case
    "DEALLOCATE since",
    "EXECUTE since (1)",  # 26000
    "DEALLOCATE since",  # 26000
    "DEALLOCATE PREPARE add2",
    "EXECUTE add2 (1, 1)",  # 26000
    "BEGIN",
    "EXECUTE nope",  # 26000, and the block fails
    "EXECUTE said ('x')",  # 25P02
    "ROLLBACK",
    "EXECUTE said ('x')",
    "DEALLOCATE ALL",
    "EXECUTE said ('x')",  # 26000
    'EXECUTE "Mixed"',  # 26000
    "DEALLOCATE PREPARE ALL",
]
PREP_ROWS = "(1, 'GET /'), (2, 'it''s'), (3, NULL)"


def _run_with_status(conn: psycopg.Connection, script: list[str]) -> list[tuple[str, object]]:
    """Each statement's rows and status, or its error's SQLSTATE."""
    out: list[tuple[str, object]] = []
    for sql in script:
        try:
            cur = conn.execute(sql)
            out.append((sql, (cur.statusmessage, cur.fetchall() if cur.description else None)))
        except psycopg.Error as e:
            out.append((sql, e.sqlstate))
    return out


@pytest.fixture
def postgres_rows(pg_server_url: str) -> Iterator[psycopg.Connection]:
    """A Postgres connection with table ``prep_rows`` (temporary: its own)."""
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE prep_rows (n bigint, msg text)")
        conn.execute(f"INSERT INTO prep_rows (n, msg) VALUES {PREP_ROWS}")
        yield conn


def test_prepare_execute_deallocate_answer_as_postgres(
    pg: PgServe, postgres_rows: psycopg.Connection
) -> None:
    with pg.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE prep_rows (n long, msg string)")
        conn.execute(f"INSERT INTO prep_rows (n, msg) VALUES {PREP_ROWS}")
        got = _run_with_status(conn, PREPARED)
    assert got == _run_with_status(postgres_rows, PREPARED)
    assert ("EXECUTE since (2)", ("SELECT 2", [(2, "it's"), (3, None)])) in got  # not vacuous


def test_errors_name_the_statement_as_postgres(pg: PgServe, postgres: psycopg.Connection) -> None:
    with pg.connect(autocommit=True) as kyma:
        for conn in (kyma, postgres):
            with pytest.raises(psycopg.Error, match='prepared statement "nope" does not exist'):
                conn.execute("EXECUTE nope")
            conn.execute("PREPARE twice AS SELECT $1::int AS one")
            with pytest.raises(psycopg.Error, match='prepared statement "twice" already exists'):
                conn.execute("PREPARE twice AS SELECT 2")
            with pytest.raises(psycopg.Error, match='wrong number of parameters.*"twice"'):
                conn.execute("EXECUTE twice (1, 2)")
            conn.execute("PREPARE none AS SELECT 1 AS one")
            # Postgres does not read arguments given to a statement that takes none
            assert conn.execute("EXECUTE none (1, 2)").fetchall() == [(1,)]
            conn.execute("DEALLOCATE ALL")


def test_prepared_statements_belong_to_their_connection(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as one, pg.connect(autocommit=True) as other:
        one.execute("PREPARE mine AS SELECT 41 + 1 AS answer")
        assert one.execute("EXECUTE mine").fetchall() == [(42,)]
        with pytest.raises(psycopg.Error) as missing:
            other.execute("EXECUTE mine")
    assert missing.value.sqlstate == "26000"


def test_over_http_they_are_refused_in_words(pg: PgServe) -> None:
    for sql, verb in (
        ("PREPARE q AS SELECT 1", "PREPARE"),
        ("EXECUTE q", "EXECUTE"),
        ("DEALLOCATE ALL", "DEALLOCATE"),
    ):
        status, _, body = request(
            f"{pg.serve.url}/v1/query",
            json.dumps({"sql": sql}).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {pg.tokens['admin']}"},
        )
        assert status == 400, body
        assert f"{verb} is not supported here" in json.loads(body)["message"], body


def test_a_rollback_after_a_write_says_the_write_stays(pg: PgServe) -> None:
    """Postgres would undo the INSERT; kyma committed it, so the ROLLBACK is refused in
    words (0A000) rather than answered as if it had been undone."""
    with pg.connect() as conn:  # psycopg opens a block before the first statement
        conn.execute("CREATE TABLE IF NOT EXISTS rolled_back (n long)")
        conn.commit()
        conn.execute("INSERT INTO rolled_back VALUES (7)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="committed each one"):
            conn.rollback()
        assert conn.execute("SELECT n FROM rolled_back").fetchall() == [(7,)]
        conn.rollback()  # a block that only read rolls back as in Postgres
