"""SQLAlchemy (with its psycopg2 dialect: the SQLAlchemy 1.4 that flightsql-dbapi allows has
no psycopg 3 dialect) and pandas ``read_sql`` against a real ``kyma serve``."""

from __future__ import annotations

import pandas as pd
import pytest
import sqlalchemy as sa
from pgwire_serve import PgServe


def _engine(pg: PgServe) -> sa.engine.Engine:
    url = f"postgresql+psycopg2://kyma:{pg.tokens['admin']}@127.0.0.1:{pg.port}/kyma"
    return sa.create_engine(url, connect_args={"connect_timeout": 10})


def test_sqlalchemy_reflects_and_queries(pg: PgServe) -> None:
    engine = _engine(pg)
    try:
        inspector = sa.inspect(engine)
        assert "events" in inspector.get_table_names()
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT n, msg FROM events WHERE n >= :low ORDER BY n"), {"low": 2}
            ).fetchall()
        assert [tuple(r) for r in rows] == [(2, "it's"), (3, None)]
    finally:
        engine.dispose()


def test_pandas_read_sql(pg: PgServe) -> None:
    # pandas 2.3 takes SQLAlchemy 2 engines only; with 1.4 it reads through a DBAPI connection
    with pg.connect() as conn, pytest.warns(UserWarning, match="Other DBAPI2 objects"):
        frame = pd.read_sql(
            "SELECT n, ts, attrs, emb FROM events WHERE n < %(high)s ORDER BY n",
            conn,
            params={"high": 3},
        )
    assert list(frame.columns) == ["n", "ts", "attrs", "emb"]
    assert frame["n"].tolist() == [1, 2]
    assert str(frame["ts"].dtype).startswith("datetime64[")
    assert frame["attrs"].tolist() == [{"http": {"method": "GET"}, "tags": ["a", "b"]}, 42]
    assert frame["emb"][0] == [0.5, 1.0, -2.0]
