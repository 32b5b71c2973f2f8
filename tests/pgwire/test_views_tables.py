"""Views, TRUNCATE, CREATE TABLE AS and INSERT … SELECT over the Postgres protocol (psycopg),
each statement answered as a real Postgres answers it (the same rows, or the same SQLSTATE
and message), and the token scopes they need."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pgwire_serve import PgServe

ROWS = "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, NULL)"

# Run in order on both; each answers the same (status and rows, or SQLSTATE and message).
STATEMENTS = [
    "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1",
    "SELECT a, b FROM v ORDER BY a",
    "CREATE VIEW v AS SELECT 1",
    "CREATE VIEW t AS SELECT 1",
    "CREATE TABLE v AS SELECT 1",
    "DROP TABLE v",
    "DROP VIEW t",
    "DROP VIEW nope",
    "DROP VIEW IF EXISTS nope",
    "CREATE OR REPLACE VIEW v AS SELECT a FROM t",
    "CREATE OR REPLACE VIEW v AS SELECT a, b AS c FROM t",
    "CREATE OR REPLACE VIEW v AS SELECT a, length(b) AS b FROM t",
    "CREATE OR REPLACE VIEW v AS SELECT a, b, a + 1 AS d FROM t",
    "SELECT a, b, d FROM v ORDER BY a",
    "SELECT v.d, t.b FROM v JOIN t ON t.a = v.a WHERE v.a = 2",
    "CREATE VIEW v2 (x) AS SELECT a, b FROM t",
    "SELECT x, b FROM v2 ORDER BY x",
    "SELECT w.x FROM v2 AS w WHERE w.b = 'y'",
    "CREATE VIEW v3 (x, y, z) AS SELECT a, b FROM t",
    "CREATE VIEW v4 AS SELECT a, a FROM t",
    "CREATE VIEW v5 AS SELECT count(*), max(x) FROM v2",
    "SELECT * FROM v5",
    "DROP TABLE t",
    "DROP VIEW v2",
    "TRUNCATE v",
    "TRUNCATE nope",
    "CREATE TABLE c AS SELECT a, b FROM v WHERE a < 3",
    "CREATE TABLE c AS SELECT a, b FROM t",
    "CREATE TABLE IF NOT EXISTS c AS SELECT a, b FROM t",
    "SELECT a, b FROM c ORDER BY a",
    "CREATE TABLE d (x, y) AS SELECT a, b FROM t",
    "SELECT x, y FROM d ORDER BY x",
    "CREATE TABLE e (x, y, z) AS SELECT a, b FROM t",
    "CREATE TABLE f AS SELECT a, a FROM t",
    "INSERT INTO c (a, b) SELECT a, b FROM t WHERE a > 1",
    "SELECT count(*), sum(a) FROM c",
    "SELECT relname, relkind FROM pg_class WHERE relname IN ('c', 't', 'v', 'v2') ORDER BY 1",
    "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
    "SELECT table_name, table_type FROM information_schema.tables"
    " WHERE table_schema = 'public' AND table_name IN ('t', 'v', 'v5') ORDER BY 1",
    "SELECT table_name FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1",
    "SELECT column_name, data_type FROM information_schema.columns"
    " WHERE table_name = 'v' ORDER BY ordinal_position",
    "CREATE VIEW v7 AS SELECT 1 AS q",
    "CREATE VIEW v8 AS SELECT q FROM v7",
    "CREATE OR REPLACE VIEW v7 AS SELECT q FROM v8",
    "SELECT * FROM v7",
    "TRUNCATE t",
    "SELECT a, b FROM v ORDER BY a",
    "SELECT count(*) FROM v5",
    "DROP VIEW v5",
    "DROP VIEW v2, v",
    "DROP VIEW v7",
    "DROP VIEW v8, v7",
    "SELECT count(*) FROM c",
]


def _answer(conn: psycopg.Connection, sql: str) -> tuple[Any, ...]:
    try:
        cur = conn.execute(sql)
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary)
    rows = cur.fetchall() if cur.description else None
    return (cur.statusmessage, rows)


@pytest.fixture
def oracle(catalog_url: str) -> Iterator[psycopg.Connection]:
    """A real Postgres (a fresh database) holding the same rows."""
    with psycopg.connect(catalog_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a bigint, b text)")
        conn.execute(ROWS)
        yield conn


def test_each_statement_answers_as_postgres(pg: PgServe, oracle: psycopg.Connection) -> None:
    with pg.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a long, b string)")
        conn.execute(ROWS)
        try:
            for sql in STATEMENTS:
                assert _answer(conn, sql) == _answer(oracle, sql), sql
        finally:
            conn.execute("DROP VIEW IF EXISTS v8, v7, v5, v2, v")
            for table in ("t", "c", "d"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")


def test_views_and_truncate_follow_the_tokens_tables(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as admin:
        admin.execute("CREATE TABLE hidden (a long)")
        admin.execute("INSERT INTO hidden (a) VALUES (7)")
        admin.execute("CREATE VIEW peek AS SELECT a FROM hidden")
    try:
        view_only = pg.new_token(["read"], ["peek"])
        both = pg.new_token(["read"], ["peek", "hidden"])
        writer = pg.new_token(["ingest"], ["hidden"])
        with _connect(pg, view_only) as conn, pytest.raises(psycopg.Error) as refused:
            conn.execute("SELECT a FROM peek")
        assert refused.value.sqlstate == "42501"
        assert "hidden" in str(refused.value)
        with _connect(pg, both) as conn:
            assert conn.execute("SELECT a FROM peek").fetchall() == [(7,)]
            for sql in ("CREATE VIEW again AS SELECT a FROM hidden", "TRUNCATE hidden"):
                with pytest.raises(psycopg.Error) as refused:
                    conn.execute(sql)
                assert refused.value.sqlstate == "42501", sql
        with _connect(pg, writer) as conn:
            assert conn.execute("TRUNCATE hidden").statusmessage == "TRUNCATE TABLE"
        with pg.connect(autocommit=True) as admin:
            assert admin.execute("SELECT count(*) FROM peek").fetchone() == (0,)
    finally:
        with pg.connect(autocommit=True) as admin:
            admin.execute("DROP VIEW IF EXISTS peek")
            admin.execute("DROP TABLE IF EXISTS hidden")


def _connect(pg: PgServe, token: str) -> psycopg.Connection:
    return psycopg.connect(pg.dsn(token), connect_timeout=10, autocommit=True)
