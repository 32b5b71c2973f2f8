"""Materialized views over the Postgres protocol, compared with a real Postgres holding the
same rows. A time-bucketed one keeps up with every change of its table (INSERT, late rows,
DELETE, UPDATE, TRUNCATE): after each, its rows are those Postgres's holds after REFRESH.
Any other keeps the rows of its last REFRESH, as Postgres's does. Refusals, listings and
DROP … CASCADE / RESTRICT answer as Postgres does."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

TABLE = "(n long, s string, r double)"
PG_TABLE = "(n bigint, s text, r double precision, _timestamp timestamptz)"
BUCKETED = (
    "CREATE MATERIALIZED VIEW {m} AS SELECT date_trunc('minute', _timestamp) AS minute, s,"
    " count(*) AS n, sum(r) AS total, min(n) AS low, max(r) AS high,"
    " count(DISTINCT n % 3) AS kinds FROM {t} WHERE n <> 13 GROUP BY 1, s"
)
READ_BUCKETED = "SELECT minute, s, n, total, low, high, kinds FROM {m} ORDER BY minute, s"


def _rows(start: int, count: int, minute: int) -> str:
    """VALUES of ``count`` rows from ``n = start`` in minute ``minute`` of an hour."""
    return ", ".join(
        f"({n}, 's{n % 3}', {'NULL' if n % 7 == 0 else n * 0.5},"
        f" '2026-11-27 10:{minute:02d}:{n % 60:02d}+00')"
        for n in range(start, start + count)
    )


def _insert(conn: Any, oracle: psycopg.Connection, table: str, values: str) -> None:
    sql = f"INSERT INTO {table} (n, s, r, _timestamp) VALUES {values}"
    conn.execute(sql)
    oracle.execute(sql)


def _answer(conn: Any, sql: str) -> tuple[Any, ...]:
    try:
        cur = conn.execute(sql)
    except psycopg.Error as e:
        return ("error", e.sqlstate, e.diag.message_primary)
    rows = cur.fetchall() if cur.description else None
    return (cur.statusmessage, rows)


@pytest.fixture(scope="module")
def utc_oracle(oracle: psycopg.Connection) -> psycopg.Connection:
    oracle.execute("SET TIME ZONE 'UTC'")
    return oracle


def test_a_bucketed_view_keeps_up_with_every_change(kyma, utc_oracle) -> None:
    oracle = utc_oracle
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE kept {TABLE}")
        oracle.execute(f"CREATE TABLE kept {PG_TABLE}")
        _insert(conn, oracle, "kept", _rows(0, 40, 1))
        create = BUCKETED.format(m="per_minute", t="kept")
        assert _answer(conn, create) == _answer(oracle, create)
        read = READ_BUCKETED.format(m="per_minute")
        changes = [
            f"INSERT INTO kept (n, s, r, _timestamp) VALUES {_rows(40, 30, 2)}",
            f"INSERT INTO kept (n, s, r, _timestamp) VALUES {_rows(70, 10, 1)}",  # late rows
            "DELETE FROM kept WHERE n % 4 = 1",
            "UPDATE kept SET r = r + 100 WHERE s = 's2'",
            f"INSERT INTO kept (n, s, r, _timestamp) VALUES {_rows(80, 5, 9)}",
            "DELETE FROM kept WHERE _timestamp >= '2026-11-27 10:09:00+00'",  # a bucket empties
            "TRUNCATE kept",
            f"INSERT INTO kept (n, s, r, _timestamp) VALUES {_rows(100, 20, 5)}",
        ]
        assert conn.execute(read).fetchall() == oracle.execute(read).fetchall()
        for change in changes:
            assert _answer(conn, change)[0] == _answer(oracle, change)[0], change
            oracle.execute("REFRESH MATERIALIZED VIEW per_minute")
            assert conn.execute(read).fetchall() == oracle.execute(read).fetchall(), change
        assert _answer(conn, "REFRESH MATERIALIZED VIEW per_minute") == (
            "REFRESH MATERIALIZED VIEW",
            None,
        )
        assert conn.execute(read).fetchall() == oracle.execute(read).fetchall()
        drop = "DROP TABLE kept CASCADE"
        assert _answer(conn, drop) == _answer(oracle, drop)


def test_other_views_hold_their_last_refresh_as_postgres(kyma, utc_oracle) -> None:
    oracle = utc_oracle
    statements = [
        "CREATE MATERIALIZED VIEW totals AS SELECT s, count(*) AS n, sum(r) AS r FROM still"
        " GROUP BY s",
        "CREATE MATERIALIZED VIEW tops (num, label) AS SELECT n, s FROM still WHERE n > 35",
        "SELECT s, n, r FROM totals ORDER BY s",
        "SELECT * FROM tops ORDER BY num",
        f"INSERT INTO still (n, s, r, _timestamp) VALUES {_rows(40, 10, 3)}",
        "SELECT s, n, r FROM totals ORDER BY s",  # not yet refreshed: the old rows
        "SELECT count(*) FROM tops",
        "REFRESH MATERIALIZED VIEW totals",
        "SELECT s, n, r FROM totals ORDER BY s",
        "DELETE FROM still WHERE n > 5",
        "REFRESH MATERIALIZED VIEW tops",
        "SELECT * FROM tops",  # refreshed to no rows
        "SELECT t.s, t.n, v.num FROM totals AS t LEFT JOIN tops AS v ON v.label = t.s ORDER BY 1",
        "CREATE MATERIALIZED VIEW lit AS SELECT 1, 'a' AS b, 2 AS b2",
        "SELECT * FROM lit",
        "CREATE MATERIALIZED VIEW lit2 (x, y) AS SELECT 1",
        "CREATE MATERIALIZED VIEW lit2 AS SELECT 1 AS a, 2 AS a",
        "DROP MATERIALIZED VIEW lit",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS totals AS SELECT 1",
        "CREATE MATERIALIZED VIEW totals AS SELECT 1",
        "CREATE MATERIALIZED VIEW still AS SELECT 1",
        "CREATE VIEW totals AS SELECT 1",
        "INSERT INTO totals (s) VALUES ('x')",
        "DELETE FROM totals",
        "UPDATE totals SET n = 1",
        "TRUNCATE totals",
        "DROP TABLE totals",
        "DROP VIEW totals",
        "DROP MATERIALIZED VIEW still",
        "DROP MATERIALIZED VIEW nope",
        "DROP MATERIALIZED VIEW IF EXISTS nope",
        "REFRESH MATERIALIZED VIEW still",
        "REFRESH MATERIALIZED VIEW nope",
        "CREATE VIEW plain AS SELECT s FROM totals",
        "REFRESH MATERIALIZED VIEW plain",
        "DROP MATERIALIZED VIEW plain",
        "SELECT relname, relkind FROM pg_class WHERE relname IN ('still', 'totals', 'tops',"
        " 'plain') ORDER BY 1",
        "SELECT matviewname, ispopulated FROM pg_matviews WHERE schemaname = 'public' ORDER BY 1",
        "SELECT viewname FROM pg_views WHERE schemaname = 'public' ORDER BY 1",
        "SELECT table_name, table_type FROM information_schema.tables"
        " WHERE table_schema = 'public' ORDER BY 1",
        "SELECT DISTINCT table_name FROM information_schema.columns"
        " WHERE table_schema = 'public' ORDER BY 1",
        "DROP TABLE still",
        "DROP MATERIALIZED VIEW totals",
        "DROP MATERIALIZED VIEW totals RESTRICT",
        "DROP VIEW plain",
        "DROP MATERIALIZED VIEW totals, tops",
        "SELECT count(*) FROM pg_matviews",
        "DROP TABLE still",
    ]
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE still {TABLE}")
        oracle.execute(f"CREATE TABLE still {PG_TABLE}")
        _insert(conn, oracle, "still", _rows(0, 40, 1))
        for sql in statements:
            assert _answer(conn, sql) == _answer(oracle, sql), sql


def test_drop_cascade_and_restrict_answer_as_postgres(kyma, utc_oracle) -> None:
    oracle = utc_oracle
    statements = [
        "CREATE VIEW first AS SELECT n, s FROM deep",
        "CREATE VIEW second AS SELECT n FROM first WHERE n > 2",
        "CREATE MATERIALIZED VIEW third AS SELECT count(*) AS c FROM second",
        "CREATE VIEW fourth AS SELECT c FROM third",
        "CREATE VIEW apart AS SELECT 1 AS one",
        "DROP TABLE deep",
        "DROP TABLE deep RESTRICT",
        "DROP VIEW first",
        "DROP VIEW second RESTRICT",
        "DROP MATERIALIZED VIEW third",
        "DROP VIEW fourth, apart",
        "SELECT c FROM third",
        "DROP VIEW second CASCADE",
        "SELECT relname, relkind FROM pg_class WHERE relname IN ('deep', 'first', 'second',"
        " 'third', 'fourth', 'apart') ORDER BY 1",
        "CREATE VIEW second AS SELECT n FROM first",
        "CREATE MATERIALIZED VIEW third AS SELECT count(*) AS c FROM second",
        "DROP TABLE IF EXISTS nope, deep CASCADE",
        "SELECT relname FROM pg_class WHERE relname IN ('deep', 'first', 'second', 'third')",
        "SELECT count(*) FROM pg_matviews",
        "DROP VIEW IF EXISTS first CASCADE",
    ]
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE deep {TABLE}")
        oracle.execute(f"CREATE TABLE deep {PG_TABLE}")
        _insert(conn, oracle, "deep", _rows(0, 10, 1))
        for sql in statements:
            assert _answer(conn, sql) == _answer(oracle, sql), sql
        assert not [
            t for t in kyma.services.catalog.list_tables() if t.name.startswith("_matview_")
        ]


def test_two_upkeeps_of_one_change_apply_it_once(kyma, utc_oracle) -> None:
    """Two upkeeps that read the view at the same base snapshot (two readers, or a reader
    and the maintenance round): the second's commit is refused by the base snapshot's
    compare-and-swap, and it finds nothing left to do."""
    oracle = utc_oracle
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE twice {TABLE}")
        oracle.execute(f"CREATE TABLE twice {PG_TABLE}")
        _insert(conn, oracle, "twice", _rows(0, 20, 1))
        create = BUCKETED.format(m="twice_view", t="twice")
        conn.execute(create)
        oracle.execute(create)
        _insert(conn, oracle, "twice", _rows(20, 20, 2))
        engine = kyma.services.query
        stale = kyma.services.catalog.get_views(["twice_view"])["twice_view"]
        engine.matviews.catch_up(stale)
        storage = kyma.services.catalog.snapshots(stale.storage)
        engine.matviews.catch_up(stale)  # as it was before the first: its CAS fails
        assert kyma.services.catalog.snapshots(stale.storage) == storage  # nothing committed
        assert kyma.services.run_maintenance()["materialized_views_kept_up"] >= 1
        for change in ("INSERT INTO {s} (c2) VALUES ('x')", "DELETE FROM {s}", "TRUNCATE {s}"):
            with pytest.raises(psycopg.errors.WrongObjectType):  # only the upkeep writes it
                conn.execute(change.format(s=stale.storage))
        read = READ_BUCKETED.format(m="twice_view")
        oracle.execute("REFRESH MATERIALIZED VIEW twice_view")
        assert conn.execute(read).fetchall() == oracle.execute(read).fetchall()
        for db in (conn, oracle):
            db.execute("DROP TABLE twice CASCADE")


def test_a_column_kyma_cannot_store_is_refused_by_its_name(kyma) -> None:
    """``sum(bigint)`` is numeric, as in Postgres; kyma stores no numeric: cast it."""
    with kyma.connect() as conn:
        conn.execute(f"CREATE TABLE summed {TABLE}")
        with pytest.raises(psycopg.errors.DatatypeMismatch) as refused:
            conn.execute(
                "CREATE MATERIALIZED VIEW sums AS SELECT s, sum(n) AS total FROM summed GROUP BY s"
            )
        assert "column 'total' is of type numeric" in str(refused.value)
        made = conn.execute(
            "CREATE MATERIALIZED VIEW sums AS SELECT s, sum(n)::bigint AS total FROM summed"
            " GROUP BY s"
        )
        assert made.statusmessage == "SELECT 0"
        conn.execute("DROP TABLE summed CASCADE")
        assert not [
            t for t in kyma.services.catalog.list_tables() if t.name.startswith("_matview_")
        ]


def test_the_statements_over_http(kyma) -> None:
    assert kyma.http(f"CREATE TABLE over_http {TABLE}")[0] == 200
    values = _rows(0, 30, 4)
    assert kyma.http(f"INSERT INTO over_http (n, s, r, _timestamp) VALUES {values}")[0] == 200
    status, body = kyma.http(BUCKETED.format(m="http_view", t="over_http"))
    assert status == 200, body
    read = "SELECT sum(n) AS rows FROM http_view"
    assert kyma.http(read)[1]["rows"] == [[29]]  # n = 13 is left out by the WHERE
    assert kyma.http(f"INSERT INTO over_http (n, s, r, _timestamp) VALUES {_rows(30, 5, 6)}")
    assert kyma.http(read)[1]["rows"] == [[34]]
    assert kyma.http("REFRESH MATERIALIZED VIEW http_view", token="read")[0] == 403
    assert kyma.http("REFRESH MATERIALIZED VIEW http_view")[0] == 200
    status, body = kyma.http("DROP TABLE over_http")
    assert (status, body["error"]) == (409, "dependent_objects_error"), body
    assert kyma.http("DROP TABLE over_http CASCADE")[0] == 200
    assert kyma.http(read)[0] == 404
