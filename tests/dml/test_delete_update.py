"""DELETE and UPDATE over HTTP and the Postgres protocol, compared with a real Postgres
holding the same rows: the counts each statement reports, the rows left, and the SQLSTATE
of each refusal. Time travel still shows deleted rows; a read token may not change rows;
a CDC table refuses DML; a DELETE racing two writers and another DELETE loses nothing and
keeps nothing it matched."""

from __future__ import annotations

import threading

import psycopg
import pytest

ROWS = [(i, f"s{i % 7}", None if i % 5 == 0 else i * 1.5, i % 3 == 0) for i in range(200)]
COLUMNS = "(n long, s string, r real, ok bool)"
PG_COLUMNS = "(n bigint, s text, r double precision, ok boolean)"
SELECT_ALL = "SELECT n, s, r, ok FROM {t} ORDER BY n"


def load(kyma, oracle, table: str) -> None:
    assert kyma.http(f"CREATE TABLE {table} {COLUMNS}")[0] == 200
    oracle.execute(f"CREATE TABLE {table} {PG_COLUMNS}")
    for start in range(0, len(ROWS), 50):  # four commits: four extents of several blocks
        part = ROWS[start : start + 50]
        values = ", ".join(
            f"({n}, '{s}', {'NULL' if r is None else r}, {str(ok).lower()})" for n, s, r, ok in part
        )
        assert kyma.http(f"INSERT INTO {table} (n, s, r, ok) VALUES {values}")[0] == 200
        oracle.execute(f"INSERT INTO {table} (n, s, r, ok) VALUES {values}")


def kyma_rows(kyma, table: str) -> list[tuple]:
    with kyma.connect() as conn:
        return conn.execute(SELECT_ALL.format(t=table)).fetchall()


def pg_rows(oracle, table: str) -> list[tuple]:
    return oracle.execute(SELECT_ALL.format(t=table)).fetchall()


STATEMENTS = [
    "DELETE FROM {t} WHERE n % 10 = 3",
    "DELETE FROM {t} WHERE s = 's2' AND r > 100",
    "DELETE FROM {t} WHERE r IS NULL OR n IN (1, 2, 4, 199)",
    "DELETE FROM {t} WHERE n % 10 = 3",  # nothing left to match
    "UPDATE {t} SET s = 'changed', r = r * 2 WHERE n BETWEEN 20 AND 40 AND NOT ok",
    "UPDATE {t} SET n = n + 1000 WHERE s = 's6'",
    "DELETE FROM {t} AS x WHERE x.n > 1100",
    "UPDATE {t} SET ok = NOT ok",
    "DELETE FROM {t} WHERE n IN (SELECT n FROM {t} WHERE s = 'changed' AND n < 30)",
]


def test_each_statement_over_http_and_pgwire_answers_as_postgres(kyma, oracle) -> None:
    load(kyma, oracle, "lifecycle")
    kyma_rows(kyma, "lifecycle")  # a read first: the decoded-column cache holds the extents
    for i, template in enumerate(STATEMENTS):
        sql = template.format(t="lifecycle")
        expected = oracle.execute(sql)
        verb = sql.split()[0]
        if i % 2 == 0:
            status, answer = kyma.http(sql)
            assert status == 200, answer
            assert answer["status"] == f"{verb} {expected.rowcount}", sql
        else:
            with kyma.connect() as conn:
                cur = conn.execute(sql)
                assert (cur.statusmessage, cur.rowcount) == (
                    f"{verb} {expected.rowcount}",
                    expected.rowcount,
                ), sql
        assert kyma_rows(kyma, "lifecycle") == pg_rows(oracle, "lifecycle"), sql
    with kyma.connect() as conn:
        counted = conn.execute("SELECT count(*) FROM lifecycle").fetchone()
    assert counted == oracle.execute("SELECT count(*) FROM lifecycle").fetchone()
    assert kyma.http("DELETE FROM lifecycle")[1]["status"] == f"DELETE {counted[0]}"
    assert kyma_rows(kyma, "lifecycle") == []


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM nowhere WHERE n = 1",  # 42P01
        "DELETE FROM errs WHERE nope = 1",  # 42703
        "UPDATE errs SET nope = 1",  # 42703
        "UPDATE nowhere SET n = 1",  # 42P01
        "UPDATE errs SET n = 'seven'",  # 22P02
    ],
)
def test_refusals_carry_postgres_sqlstate(kyma, oracle, sql: str) -> None:
    if not oracle.execute("SELECT to_regclass('errs')").fetchone()[0]:
        load(kyma, oracle, "errs")
    with pytest.raises(psycopg.Error) as expected:
        oracle.execute(sql)
    with kyma.connect() as conn, pytest.raises(psycopg.Error) as got:
        conn.execute(sql)
    assert got.value.sqlstate == expected.value.sqlstate, got.value
    assert kyma_rows(kyma, "errs") == pg_rows(oracle, "errs")


def test_clauses_kyma_does_not_run_are_refused_0a000(kyma, oracle) -> None:
    if not oracle.execute("SELECT to_regclass('errs')").fetchone()[0]:
        load(kyma, oracle, "errs")
    for sql in ("DELETE FROM errs WHERE n = 1 RETURNING n", "DELETE FROM errs USING errs e2"):
        with kyma.connect() as conn, pytest.raises(psycopg.Error) as got:
            conn.execute(sql)
        assert got.value.sqlstate == "0A000", sql
    assert kyma_rows(kyma, "errs") == pg_rows(oracle, "errs")


def test_older_snapshots_still_show_deleted_rows(kyma, oracle) -> None:
    load(kyma, oracle, "travel")
    before = kyma.services.catalog.get_table("travel").current_snapshot_id
    assert kyma.http("DELETE FROM travel WHERE n < 150")[1]["status"] == "DELETE 150"
    status, now = kyma.http("SELECT count(*) AS c FROM travel")
    assert now["rows"] == [[50]]
    status, then = kyma.http(
        f"SELECT count(*) AS c, sum(n) AS s FROM travel AS OF SNAPSHOT {before}"
    )
    assert then["rows"] == [[200, sum(range(200))]], then
    status, answer = kyma.http("SELECT count(*) AS c FROM travel WHERE n < 150")
    assert answer["rows"] == [[0]]
    assert answer["stats"]["rows_scanned"] <= 50  # the stats count live rows only
    headers = {"Authorization": f"Bearer {kyma.tokens['admin']}"}
    described = kyma.client.get("/v1/tables/travel", headers=headers).get_json()
    assert described["rows"] == 50, described


def test_a_read_token_may_not_change_rows(kyma, oracle) -> None:
    load(kyma, oracle, "guarded")
    for sql in ("DELETE FROM guarded", "UPDATE guarded SET n = 0", "VACUUM guarded"):
        status, answer = kyma.http(sql, token="read")
        assert status == 403, answer
        with kyma.connect("read") as conn, pytest.raises(psycopg.Error) as got:
            conn.execute(sql)
        assert got.value.sqlstate == "42501", sql
    assert kyma_rows(kyma, "guarded") == pg_rows(oracle, "guarded")
    assert kyma.http("DELETE FROM guarded WHERE n < 10")[1]["status"] == "DELETE 10"  # admin


def test_a_cdc_table_refuses_dml_saying_why(kyma) -> None:
    kyma.services.catalog.create_table("mirrored", [], options={"cdc": "postgres"})
    for sql in ("DELETE FROM mirrored", "UPDATE mirrored SET props = NULL"):
        status, answer = kyma.http(sql)
        assert status == 400 and "kept in sync by a CDC connector" in answer["message"], answer


def test_delete_racing_writers_and_another_delete_is_exact(kyma) -> None:
    """Two writers append ``keep`` rows while two DELETEs remove disjoint halves of the
    ``doomed`` rows that were there before: every written row stays, no doomed row does."""
    assert kyma.http("CREATE TABLE raced (n long, tag string)")[0] == 200
    doomed = ", ".join(f"({i}, 'doomed')" for i in range(300))
    assert kyma.http(f"INSERT INTO raced (n, tag) VALUES {doomed}")[0] == 200
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            for batch in range(10):
                rows = ", ".join(f"({writer * 1000 + batch * 20 + i}, 'keep')" for i in range(20))
                status, answer = kyma.http(f"INSERT INTO raced (n, tag) VALUES {rows}")
                assert status == 200, answer
        except BaseException as e:
            errors.append(e)

    deleted: list[int] = []

    def delete(parity: int) -> None:
        try:
            for _ in range(3):
                status, answer = kyma.http(
                    f"DELETE FROM raced WHERE tag = 'doomed' AND n % 2 = {parity}"
                )
                assert status == 200, answer
                deleted.append(int(answer["status"].split()[1]))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(w,)) for w in (1, 2)]
    threads += [threading.Thread(target=delete, args=(p,)) for p in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(deleted) == 300
    status, answer = kyma.http(
        "SELECT tag, count(*) AS c, count(DISTINCT n) AS d FROM raced GROUP BY tag"
    )
    assert answer["rows"] == [["keep", 400, 400]], answer


BOUNDS_ROWS = 240
BOUNDS_QUERIES = [
    "SELECT min(n), max(n), count(*) FROM bounds",
    "SELECT min(_timestamp), max(_timestamp) FROM bounds",
    "SELECT count(*) FROM bounds WHERE n < 1",
    "SELECT n FROM bounds WHERE n <= 1 OR n >= 238 ORDER BY n",
    "SELECT n FROM bounds WHERE n BETWEEN 59 AND 61 ORDER BY n",
    "SELECT count(*) FROM bounds WHERE _timestamp < '2026-11-27 10:00:01+00'",
    "SELECT min(n) FROM bounds WHERE s = 'a'",
    "SELECT s, min(n), max(n) FROM bounds GROUP BY s ORDER BY s",
]


def test_a_deleted_least_or_greatest_value_is_never_answered(kyma, oracle) -> None:
    """An extent's min/max in the catalog and its block stats still count the rows a DELETE
    marked (the deletion vector leaves them in the object): pruning may keep an extent for a
    deleted value, never answer from it. Each extent's least and greatest values deleted,
    then asked for, answer as Postgres holding the same rows does."""
    oracle.execute("SET TIME ZONE 'UTC'")
    oracle.execute("CREATE TABLE bounds (n bigint, s text, _timestamp timestamptz)")
    with kyma.connect() as conn:
        conn.execute("CREATE TABLE bounds (n long, s string)")
        for start in range(0, BOUNDS_ROWS, 60):  # four commits: four extents, each of n in order
            values = ", ".join(
                f"({n}, '{'ab'[n % 2]}', '2026-11-27 10:{n // 60:02d}:{n % 60:02d}+00')"
                for n in range(start, start + 60)
            )
            for db in (conn, oracle):
                db.execute(f"INSERT INTO bounds (n, s, _timestamp) VALUES {values}")
        for q in BOUNDS_QUERIES:  # read first: plans, pruning and decoded columns are kept
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q
        # each extent's least and greatest n (and _timestamp), and the a's least
        delete = "DELETE FROM bounds WHERE n % 60 IN (0, 59) OR n = 1"
        for db in (conn, oracle):
            db.execute(delete)
        for q in BOUNDS_QUERIES:
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q
        update = "UPDATE bounds SET n = n + 1000 WHERE n = 2"  # the least moves away
        for db in (conn, oracle):
            db.execute(update)
        for q in BOUNDS_QUERIES:
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q


def test_truncating_several_tables_is_one_catalog_commit(kyma, oracle) -> None:
    """One snapshot of each table in one catalog transaction: they share its time."""
    with kyma.connect() as conn:
        for table in ("left_t", "right_t"):
            conn.execute(f"CREATE TABLE {table} (n long)")
            oracle.execute(f"CREATE TABLE {table} (n bigint)")
            for db in (conn, oracle):
                db.execute(f"INSERT INTO {table} (n) VALUES (1), (2)")
                db.execute(f"INSERT INTO {table} (n) VALUES (3)")
        sql = "TRUNCATE left_t, right_t"
        assert conn.execute(sql).statusmessage == oracle.execute(sql).statusmessage
        catalog = kyma.services.catalog
        last = [catalog.snapshots(t)[-1] for t in ("left_t", "right_t")]
        assert [s.summary.get("operation") for s in last] == ["truncate", "truncate"]
        assert last[0].created_at == last[1].created_at  # now(): one transaction's time
        for db in (conn, oracle):
            db.execute("INSERT INTO right_t (n) VALUES (4)")
        query = "SELECT (SELECT count(*) FROM left_t), (SELECT sum(n) FROM right_t)"
        assert conn.execute(query).fetchall() == oracle.execute(query).fetchall()
