"""TRUNCATE of several tables commits one snapshot of each in one catalog transaction: the
snapshots share their transaction's time, and the rows after it answer as Postgres."""

from __future__ import annotations


def test_truncating_several_tables_is_one_catalog_commit(kyma, oracle) -> None:
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
