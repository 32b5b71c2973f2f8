"""SQLAlchemy 2 (its psycopg 3 and psycopg2 dialects) and pandas against a real ``kyma
serve``: the inspector reflects kyma's tables and views as it reflects the same tables and
view on a real Postgres (kyma has no keys, indexes or constraints, as those tables have
none), queries run with parameters, ``pandas.read_sql_table`` reads a whole table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa
from pgwire_serve import PgServe

VIEW = "CREATE VIEW recent AS SELECT n, msg FROM events WHERE n > 1"
# events as kyma makes it (tests/pgwire/conftest.py, with the columns every table has), in
# Postgres' types
ORACLE = [
    "CREATE TABLE events (_timestamp timestamptz, props jsonb,"
    " n bigint, msg text, ts timestamptz, attrs jsonb, emb real[])",
    VIEW,
]
COLUMNS = ["_timestamp", "props", "n", "msg", "ts", "attrs", "emb"]
DRIVERS = ["psycopg", "psycopg2"]


def _engine(driver: str, dsn: str) -> sa.engine.Engine:
    return sa.create_engine(dsn.replace("postgresql://", f"postgresql+{driver}://", 1))


@pytest.fixture(scope="module")
def kyma_url(pg: PgServe) -> str:
    with pg.connect(autocommit=True) as conn:
        conn.execute(VIEW)
    return f"postgresql://kyma:{pg.tokens['admin']}@127.0.0.1:{pg.port}/kyma?connect_timeout=10"


@pytest.fixture(scope="module")
def oracle_url(module_catalog_url: str) -> str:
    """The same table and view on the loopback Postgres."""
    engine = _engine("psycopg", module_catalog_url)
    with engine.begin() as conn:
        for statement in ORACLE:
            conn.execute(sa.text(statement))
    engine.dispose()
    return module_catalog_url


@pytest.fixture(params=DRIVERS)
def engines(request, kyma_url: str, oracle_url: str) -> Iterator[tuple[Any, Any]]:  # type: ignore[no-untyped-def]
    kyma, oracle = _engine(request.param, kyma_url), _engine(request.param, oracle_url)
    try:
        yield sa.inspect(kyma), sa.inspect(oracle)
    finally:
        kyma.dispose()
        oracle.dispose()


def _columns(inspector: Any, name: str) -> list[dict[str, Any]]:
    return [{**column, "type": str(column["type"])} for column in inspector.get_columns(name)]


def test_the_inspector_reflects_as_on_postgres(engines: tuple[Any, Any]) -> None:
    kyma, oracle = engines
    assert kyma.get_table_names() == oracle.get_table_names() == ["events"]
    assert kyma.get_view_names() == oracle.get_view_names() == ["recent"]
    assert "public" in kyma.get_schema_names()
    assert kyma.get_schema_names() == oracle.get_schema_names()
    assert kyma.default_schema_name == oracle.default_schema_name == "public"
    for name in ("events", "recent"):
        assert _columns(kyma, name) == _columns(oracle, name), name
        assert kyma.has_table(name) and not kyma.has_table(name + "_nope")
    for table in ("events", "recent"):
        for reflect in (
            "get_pk_constraint",
            "get_foreign_keys",
            "get_indexes",
            "get_unique_constraints",
            "get_check_constraints",
            "get_table_comment",
        ):
            assert getattr(kyma, reflect)(table) == getattr(oracle, reflect)(table), reflect
    assert kyma.get_view_definition("recent") == "SELECT n, msg FROM events WHERE n > 1"


def test_a_table_reflects_into_metadata(engines: tuple[Any, Any]) -> None:
    kyma, _ = engines
    events = sa.Table("events", sa.MetaData(), autoload_with=kyma.bind)
    assert [c.name for c in events.columns] == COLUMNS
    assert isinstance(events.c.ts.type, sa.TIMESTAMP) and events.c.ts.type.timezone
    assert events.primary_key.columns.keys() == []


@pytest.mark.parametrize("driver", DRIVERS)
def test_sqlalchemy_queries_with_parameters(kyma_url: str, driver: str) -> None:
    engine = _engine(driver, kyma_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT n, msg FROM events WHERE n >= :low ORDER BY n"), {"low": 2}
            ).fetchall()
        assert [tuple(r) for r in rows] == [(2, "it's"), (3, None)]
    finally:
        engine.dispose()


def test_pandas_reads_a_table_and_a_query(kyma_url: str) -> None:
    engine = _engine("psycopg", kyma_url)
    try:
        frame = pd.read_sql_table("events", engine)
        assert list(frame.columns) == COLUMNS
        assert sorted(frame["n"].tolist()) == [1, 2, 3]
        frame = pd.read_sql(
            sa.text("SELECT n, ts, attrs, emb FROM events WHERE n < :high ORDER BY n"),
            engine,
            params={"high": 3},
        )
    finally:
        engine.dispose()
    assert frame["n"].tolist() == [1, 2]
    assert str(frame["ts"].dtype).startswith("datetime64[")
    assert frame["attrs"].tolist() == [{"http": {"method": "GET"}, "tags": ["a", "b"]}, 42]
    assert frame["emb"][0] == [0.5, 1.0, -2.0]


def _frame() -> pd.DataFrame:
    """What a notebook writes: every numeric width, missing values, text with a quote, zoned
    timestamps, and the extremes of a bigint."""
    return pd.DataFrame(
        {
            "i": [1, 2, 3],
            "big": [-(2**63), 2**63 - 1, 0],
            "i32": np.array([1, -2, 3], dtype="int32"),
            "i16": np.array([1, -2, 3], dtype="int16"),
            "f": [1.5, None, -2.0],
            "f32": np.array([0.5, 1, 2], dtype="float32"),
            "s": ["a", None, "it's"],
            "b": [True, False, None],
            "t": pd.to_datetime(
                ["2024-01-01T00:00:00Z", "2024-01-02T03:04:05.123456Z", None], format="ISO8601"
            ),
        }
    )


def _write_and_read(url: str, driver: str, name: str) -> list[Any]:
    """to_sql's create, append and replace, each followed by the table read back whole."""
    frame, engine = _frame(), _engine(driver, url)
    select = f"SELECT {', '.join(frame.columns)} FROM {name} ORDER BY i, big"
    seen: list[Any] = []
    try:
        for mode in ("fail", "append", "replace"):
            seen.append((mode, frame.to_sql(name, engine, if_exists=mode, index=False)))
            read = pd.read_sql(select, engine)
            values = read.astype(object).where(read.notna(), None)  # NaN, NaT: None
            seen.append((mode, read.dtypes.astype(str).to_dict(), values.to_dict("list")))
        with pytest.raises(ValueError, match="already exists"):
            frame.to_sql(name, engine, index=False)
    finally:
        engine.dispose()
    return seen


@pytest.mark.parametrize("driver", DRIVERS)
def test_pandas_to_sql_writes_as_into_postgres(kyma_url: str, oracle_url: str, driver: str) -> None:
    name = f"frame_{driver}"
    kyma = _write_and_read(kyma_url, driver, name)
    assert kyma == _write_and_read(oracle_url, driver, name)
    assert [len(step[2]["i"]) for step in kyma if len(step) == 3] == [3, 6, 3]
