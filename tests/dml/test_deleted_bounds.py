"""An extent's min/max in the catalog and its block stats still count the rows a DELETE
marked (the deletion vector leaves them in the object): pruning may keep an extent for a
deleted value, never answer from it. Deleting each extent's least and greatest values,
then asking for them, answers as Postgres holding the same rows does."""

from __future__ import annotations

ROWS = 240
QUERIES = [
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
    oracle.execute("SET TIME ZONE 'UTC'")
    oracle.execute("CREATE TABLE bounds (n bigint, s text, _timestamp timestamptz)")
    with kyma.connect() as conn:
        conn.execute("CREATE TABLE bounds (n long, s string)")
        for start in range(0, ROWS, 60):  # four commits: four extents, each of n in order
            values = ", ".join(
                f"({n}, '{'ab'[n % 2]}', '2026-11-27 10:{n // 60:02d}:{n % 60:02d}+00')"
                for n in range(start, start + 60)
            )
            for db in (conn, oracle):
                db.execute(f"INSERT INTO bounds (n, s, _timestamp) VALUES {values}")
        for q in QUERIES:  # read first: plans, pruning and decoded columns are kept
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q
        # each extent's least and greatest n (and _timestamp), and the a's least
        delete = "DELETE FROM bounds WHERE n % 60 IN (0, 59) OR n = 1"
        for db in (conn, oracle):
            db.execute(delete)
        for q in QUERIES:
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q
        update = "UPDATE bounds SET n = n + 1000 WHERE n = 2"  # the least moves away
        for db in (conn, oracle):
            db.execute(update)
        for q in QUERIES:
            assert conn.execute(q).fetchall() == oracle.execute(q).fetchall(), q
