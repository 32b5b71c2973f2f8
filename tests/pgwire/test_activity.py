"""pg_stat_activity, pg_cancel_backend and pg_terminate_backend over the Postgres protocol,
against a real ``kyma serve`` (tokens ``alice`` and ``bob``: read scope; ``admin``), with
Postgres 15 as the oracle for messages, SQLSTATEs, columns and what another role's row shows
(roles ``alice`` and ``bob`` there: no superuser, no pg_signal_backend)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from pgwire_serve import LONG_QUERY, PgServe
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from serve_helpers import request

# kyma has no oid, name, inet or xid types: the column types it gives instead
_TYPES = {26: 20, 19: 25, 869: 25, 28: 25}  # oid→bigint, name→text, inet→text, xid→text
_COLUMNS = "SELECT * FROM pg_stat_activity WHERE pid = {pid}"
_UNKNOWN = 2147483647  # no backend's pid in either


@pytest.fixture(scope="module")
def roles(pg: PgServe) -> dict[str, str]:
    """Tokens ``alice`` and ``bob`` (read scope) besides ``admin``."""
    tokens = dict(pg.tokens)
    for name in ("alice", "bob"):
        tokens[name] = pg.new_token(["read"], name=name)
    return tokens


@pytest.fixture(scope="module")
def oracle(pg_server_url: str) -> Iterator[dict[str, str]]:
    """Connection strings of Postgres roles ``alice`` and ``bob`` (neither superuser)."""
    params = conninfo_to_dict(pg_server_url)
    names = {"alice": "kyma_activity_alice", "bob": "kyma_activity_bob"}
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        for role in names.values():
            admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'secret'")
        try:
            yield {
                who: make_conninfo(**{**params, "user": role, "password": "secret"})
                for who, role in names.items()
            }
        finally:
            for role in names.values():
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                    (role,),
                )
                admin.execute(f"DROP ROLE {role}")


def _connect(pg: PgServe, tokens: dict[str, str], who: str) -> psycopg.Connection:
    return psycopg.connect(pg.dsn(tokens[who]), connect_timeout=10, autocommit=True)


@contextmanager
def _slow(conn: psycopg.Connection) -> Iterator[tuple[threading.Thread, dict[str, Any]]]:
    """LONG_QUERY on ``conn`` in a thread; the answer gets its error. A test that fails
    leaves it cancelled (a client's cancel request), not running for minutes."""
    answer: dict[str, Any] = {}

    def run() -> None:
        try:
            answer["rows"] = conn.execute(LONG_QUERY).fetchall()
        except psycopg.Error as e:
            answer["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield thread, answer
    finally:
        if thread.is_alive():
            conn.cancel()
            thread.join(20)


def _active(conn: psycopg.Connection, pid: int) -> tuple[Any, ...]:
    """Session ``pid``'s row once it is active with LONG_QUERY (within 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        row = conn.execute(
            f"SELECT state, query, backend_type FROM pg_stat_activity WHERE pid = {pid}"
        ).fetchone()
        if row is not None and row[:2] == ("active", LONG_QUERY):
            return row
        time.sleep(0.05)
    raise AssertionError(f"session {pid} never showed LONG_QUERY as active")


def _post(pg: PgServe, token: str, sql: str) -> tuple[int, dict[str, Any]]:
    """POST /v1/query: status and JSON answer."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    body = json.dumps({"sql": sql}).encode()
    status, _, answer = request(f"{pg.serve.url}/v1/query", body, headers)
    return status, json.loads(answer)


def _stopped(thread: threading.Thread, answer: dict[str, Any]) -> psycopg.Error:
    thread.join(20)
    assert not thread.is_alive() and "error" in answer, answer
    return answer["error"]


def _outcome(conn: psycopg.Connection, sql: str) -> tuple[Any, ...]:
    """(rows, warnings) of ``sql``, or (SQLSTATE, message) of its error."""
    notices: list[tuple[str, str]] = []

    def heard(notice: psycopg.errors.Diagnostic) -> None:
        notices.append((notice.severity, notice.message_primary))

    conn.add_notice_handler(heard)
    try:
        return conn.execute(sql).fetchall(), notices
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary
    finally:
        conn.remove_notice_handler(heard)


def test_sessions_listed_with_their_statements(pg: PgServe, roles: dict[str, str]) -> None:
    with _connect(pg, roles, "alice") as mine, _connect(pg, roles, "alice") as other:
        own = "SELECT state, query, backend_type, usename FROM pg_stat_activity WHERE pid = "
        own += str(mine.info.backend_pid)
        state, query, kind, user = mine.execute(own).fetchone()  # type: ignore[misc]
        assert (state, query, kind) == ("active", own, "client backend")
        assert user.startswith("token ")
        with _slow(other) as (thread, answer):
            _active(mine, other.info.backend_pid)
            # cancelled from the owner's other session: the statement ends with 57014
            pid = other.info.backend_pid  # a parameter, as drivers send it
            assert mine.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone() == (True,)
            assert _stopped(thread, answer).sqlstate == "57014"
        qualified = _COLUMNS.replace("pg_stat_activity", "pg_catalog.pg_stat_activity")
        row = mine.execute(qualified.format(pid=other.info.backend_pid)).fetchone()
        assert row is not None
        names = [c.name for c in mine.execute("SELECT * FROM pg_stat_activity LIMIT 0").description]
        shown = dict(zip(names, row, strict=True))
        assert (shown["state"], shown["query"]) == ("idle", LONG_QUERY)  # its last statement
        assert other.execute("SELECT 1").fetchone() == (1,)  # the session goes on
        other.execute("BEGIN")
        state = "SELECT state, query, xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = "
        assert mine.execute(state + str(pid)).fetchone() == ("idle in transaction", "BEGIN", True)
        other.execute("ROLLBACK")
        assert mine.execute(state + str(pid)).fetchone() == ("idle", "ROLLBACK", False)
    assert f"(pgwire) cancelled by {user}" in pg.serve.printed()  # the query log says who


def test_columns_and_another_roles_row_as_postgres(
    pg: PgServe, roles: dict[str, str], oracle: dict[str, str]
) -> None:
    def rows(alice: psycopg.Connection, bob: psycopg.Connection) -> tuple[Any, ...]:
        own = alice.execute(_COLUMNS.format(pid=alice.info.backend_pid))
        columns = [(c.name, c.type_code) for c in own.description or ()]
        mine = own.fetchone()
        theirs = alice.execute(_COLUMNS.format(pid=bob.info.backend_pid)).fetchone()
        assert mine is not None and theirs is not None
        return columns, mine, theirs

    with _connect(pg, roles, "alice") as alice, _connect(pg, roles, "bob") as bob:
        columns, mine, theirs = rows(alice, bob)
    with (
        psycopg.connect(oracle["alice"], autocommit=True) as alice,
        psycopg.connect(oracle["bob"], autocommit=True) as bob,
    ):
        expected, pg_mine, pg_theirs = rows(alice, bob)
    assert columns == [(name, _TYPES.get(oid, oid)) for name, oid in expected]
    names = [name for name, _ in columns]
    # kyma has no role OIDs nor transaction ids: usesysid and backend_xmin stay NULL
    differ = {"usesysid", "backend_xmin"}

    def nulls(row: tuple[Any, ...]) -> set[str]:
        return {n for n, v in zip(names, row, strict=True) if v is None} - differ

    assert nulls(mine) == nulls(pg_mine)
    assert nulls(theirs) == nulls(pg_theirs)
    assert theirs[names.index("query")] == pg_theirs[names.index("query")]
    assert theirs[names.index("query")] == "<insufficient privilege>"
    assert mine[names.index("state")] == pg_mine[names.index("state")] == "active"


def test_another_roles_backend_refused_as_postgres(
    pg: PgServe, roles: dict[str, str], oracle: dict[str, str]
) -> None:
    def refusals(alice: psycopg.Connection, bob: psycopg.Connection) -> list[tuple[Any, ...]]:
        pid = bob.info.backend_pid
        return [
            _outcome(alice, f"SELECT pg_cancel_backend({pid})"),
            _outcome(alice, f"SELECT pg_terminate_backend({pid})"),
        ]

    with (
        _connect(pg, roles, "alice") as alice,
        _connect(pg, roles, "bob") as bob,
        _connect(pg, roles, "admin") as admin,
        _slow(bob) as (thread, answer),
    ):
        _active(admin, bob.info.backend_pid)  # alice sees only that bob's session is there
        kyma_answers = refusals(alice, bob)
        assert thread.is_alive()  # refused: bob's statement runs on
        cancel = f"SELECT pg_cancel_backend({bob.info.backend_pid})"
        assert admin.execute(cancel).fetchone() == (True,)  # an admin stops it
        assert _stopped(thread, answer).sqlstate == "57014"
    with (
        psycopg.connect(oracle["alice"], autocommit=True) as alice,
        psycopg.connect(oracle["bob"], autocommit=True) as bob,
    ):
        assert kyma_answers == refusals(alice, bob)
    assert kyma_answers[0][0] == "42501"


def test_terminate_closes_the_session_as_postgres(
    pg: PgServe, roles: dict[str, str], oracle: dict[str, str]
) -> None:
    def terminated(killer: psycopg.Connection, victim: psycopg.Connection) -> tuple[Any, ...]:
        answer = killer.execute(f"SELECT pg_terminate_backend({victim.info.backend_pid}, 5000)")
        with pytest.raises(psycopg.OperationalError) as raised:
            victim.execute("SELECT 1")
        return answer.fetchall(), type(raised.value).__name__, raised.value.sqlstate

    with _connect(pg, roles, "alice") as alice, _connect(pg, roles, "alice") as idle:
        kyma_answer = terminated(alice, idle)
        listed = alice.execute(_COLUMNS.format(pid=idle.info.backend_pid)).fetchall()
        assert listed == []  # gone from pg_stat_activity
    with (
        psycopg.connect(oracle["alice"], autocommit=True) as alice,
        psycopg.connect(oracle["alice"], autocommit=True) as idle,
    ):
        assert kyma_answer == terminated(alice, idle)
    assert kyma_answer == ([(True,)], "AdminShutdown", "57P01")
    # an admin terminates another's session while it runs a statement: FATAL 57P01 too
    with (
        _connect(pg, roles, "bob") as bob,
        _connect(pg, roles, "admin") as admin,
        _slow(bob) as (thread, answer),
    ):
        _active(admin, bob.info.backend_pid)
        terminate = f"SELECT pg_terminate_backend({bob.info.backend_pid}, 5000)"
        assert admin.execute(terminate).fetchone() == (True,)
        assert _stopped(thread, answer).sqlstate == "57P01"


def test_unknown_pid_and_bad_timeout_as_postgres(
    pg: PgServe, roles: dict[str, str], pg_server_url: str
) -> None:
    statements = [
        f"SELECT pg_cancel_backend({_UNKNOWN})",
        f"SELECT pg_terminate_backend({_UNKNOWN}) AS ended",
        "SELECT pg_cancel_backend(NULL)",
        f"SELECT pg_cancel_backend('{_UNKNOWN}'), pg_catalog.pg_cancel_backend(0)",
        f"SELECT pg_terminate_backend({_UNKNOWN}, -1)",
    ]
    with _connect(pg, roles, "alice") as conn:
        answers = [_outcome(conn, sql) for sql in statements]
        # kyma's own: the calls run as a statement of their own; cancelling one's own
        # statement ends it, as in Postgres
        refused = "SELECT pg_cancel_backend(pid) FROM pg_catalog.pg_stat_activity"
        assert _outcome(conn, refused)[0] == "0A000"
        own = _outcome(conn, f"SELECT pg_cancel_backend({conn.info.backend_pid})")
        assert own[0] == "57014", own
        assert conn.execute("SELECT 1").fetchone() == (1,)
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        assert answers == [_outcome(conn, sql) for sql in statements]
    assert answers[0] == (
        [(False,)],
        [("WARNING", f"PID {_UNKNOWN} is not a PostgreSQL backend process")],
    )


def test_http_statements_listed_and_cancelled_by_pid(pg: PgServe, roles: dict[str, str]) -> None:
    """A pgwire session's statement cancelled over HTTP, and a statement running over HTTP
    listed under a negative pid and cancelled by it."""
    answer: dict[str, Any] = {}

    def over_http() -> None:
        answer["http"] = _post(pg, roles["bob"], LONG_QUERY)

    with _connect(pg, roles, "bob") as bob, _connect(pg, roles, "admin") as admin:
        with _slow(bob) as (thread, slow):
            _active(admin, bob.info.backend_pid)
            cancel = f"SELECT pg_cancel_backend({bob.info.backend_pid})"
            status, body = _post(pg, roles["bob"], cancel)
            assert status == 200 and body["rows"] == [[True]], body
            assert _stopped(thread, slow).sqlstate == "57014"
        http = threading.Thread(target=over_http, daemon=True)
        http.start()
        listed = "SELECT pid, state FROM pg_stat_activity WHERE backend_type = 'http'"
        try:
            deadline, rows = time.monotonic() + 20, []
            while not rows and time.monotonic() < deadline:
                rows = admin.execute(listed).fetchall()
            assert len(rows) == 1 and rows[0][0] < 0 and rows[0][1] == "active", rows
            cancel = f"SELECT pg_cancel_backend({rows[0][0]})"
            assert admin.execute(cancel).fetchone() == (True,)
            http.join(20)
            assert answer["http"][0] == 409, answer
        finally:
            for pid, _ in admin.execute(listed).fetchall():
                admin.execute(f"SELECT pg_cancel_backend({pid})")
