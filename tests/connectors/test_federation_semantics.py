"""Federation gives Postgres's answer, pushed down or not, over CHAR/DECIMAL/DATE schemas.

Every query of ``dss_queries.sql`` (joins of up to six tables, extract(year …), substring,
CASE inside aggregates, EXISTS and correlated subqueries) runs three ways: directly on
Postgres, through kyma with pushdown, and through kyma with ``pushdown: false`` (every
operation in DataFusion). All three must agree, in order where the query orders.

The source runs in America/New_York. Two copies of the schema: ``dss_c`` under the C.UTF-8
collation (kyma may order its text itself) and ``dss_icu`` under ICU en-US, where kyma must
push text ordering to the source or refuse it, never order it differently.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from query_strategies import rows_equal
from source_postgres import SourceDatabase, SourcePostgres

from kyma.connectors.registry import ConnectorRegistry
from kyma.connectors.secrets import SecretPolicy
from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine
from kyma.engine.query.pg_numeric import decimals
from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores

HERE = Path(__file__).parent
QUERIES = [
    q.strip()
    for q in re.sub(r"--[^\n]*", "", (HERE / "dss_queries.sql").read_text()).split(";")
    if q.strip()
]
TABLES = "region|nation|supplier|customer|orders|lineitem"
SECRET_ENV = "KYMA_SECRET_TEST_DSS_PASSWORD"
LOCALES = {
    "dss_c": "LOCALE 'C.UTF-8'",
    "dss_icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
}


@pytest.fixture(scope="module")
def dss(source_pg: SourcePostgres, source_db: SourceDatabase) -> dict[str, str]:
    """Both copies of the seeded schema, readable by the ``app`` role: name → its URL."""
    urls = {}
    for name, locale in LOCALES.items():
        with psycopg.connect(source_pg.admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 {locale}")
            admin.execute(f"ALTER DATABASE {name} SET timezone TO 'America/New_York'")
        admin_url = source_pg.admin_url.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute((HERE / "dss_seed.sql").read_text())
            conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO app")
        urls[name] = source_pg.url(name, "app")
    return urls


@pytest.fixture(scope="module")
def engines(pg_server_url, dss, source_db, tmp_path_factory) -> Iterator[dict[str, QueryEngine]]:  # type: ignore[no-untyped-def]
    """One engine per copy, each with its own catalog and the connector ``src`` on it."""
    engines, opened = {}, []
    with pytest.MonkeyPatch.context() as env:
        env.setenv(SECRET_ENV, source_db.password)
        for database, url in dss.items():
            name = f"t_federation_semantics_{database}"
            with psycopg.connect(pg_server_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{name}"')
            stores = Stores.open(f"{pg_server_url.rpartition('/')[0]}/{name}")
            home = tmp_path_factory.mktemp(f"home_{database}")
            registry = ConnectorRegistry(
                stores.catalog, stores.connectors, stores.cdc, SecretPolicy(home / "secrets", home)
            )
            registry.create(
                {
                    "name": "src",
                    "type": "postgres",
                    "connection": {"url": url, "secret_ref": f"$env:{SECRET_ENV}"},
                }
            )
            store = LocalStore(tmp_path_factory.mktemp(database))
            engines[database] = QueryEngine(stores.catalog, store, segment_format(), registry)
            opened.append((registry, stores))
        yield engines
    for registry, stores in opened:
        registry.close()
        stores.close()


def in_postgres(url: str, password: str, query: str) -> list[tuple]:
    """The rows as kyma reports them: dates at midnight UTC, char(n) without its padding.

    The session runs in UTC, kyma's session time zone (the server's default is New York).
    """
    with psycopg.connect(url, password=password, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        rows = conn.execute(query).fetchall()
    return [tuple(_as_kyma(v) for v in row) for row in rows]


def _as_kyma(value: object) -> object:
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return datetime.datetime.combine(value, datetime.time(), datetime.UTC)
    if isinstance(value, str):
        return value.rstrip(" ")  # kyma reads char(n) as Postgres compares it: unpadded
    return value


def through_kyma(engine: QueryEngine, query: str, *, pushdown: bool) -> list[tuple]:
    sql = re.sub(rf"\b({TABLES})\b(?!\.)", r"src.public.\1", query)
    table = decimals(engine.execute(sql, pushdown=pushdown).table)  # quotients as decimals
    return [tuple(row.values()) for row in table.to_pylist()]


@pytest.mark.parametrize("query", QUERIES, ids=[f"q{i:02d}" for i in range(len(QUERIES))])
def test_three_ways_agree_under_c_collation(engines, dss, source_db, query: str) -> None:  # type: ignore[no-untyped-def]
    expected = in_postgres(dss["dss_c"], source_db.password, query)
    ordered = " ORDER BY " in query
    for pushdown in (True, False):
        actual = through_kyma(engines["dss_c"], query, pushdown=pushdown)
        assert rows_equal(expected, actual, ordered), (pushdown, expected[:3], actual[:3])


def test_the_reported_char_comparison(engines) -> None:  # type: ignore[no-untyped-def]
    query = (
        "SELECT n_name, length(n_name), n_name = 'FRANCE', n_name LIKE 'FRANCE %'"
        " FROM nation WHERE n_nationkey = 6"
    )
    for pushdown in (True, False):
        # Postgres: blanks are insignificant to = and length, but LIKE sees them.
        assert through_kyma(engines["dss_c"], query, pushdown=pushdown) == [
            ("FRANCE", 6, True, True)
        ]


def test_decimals_stay_exact_and_round_like_postgres(engines, dss, source_db) -> None:  # type: ignore[no-untyped-def]
    query = (
        "SELECT avg(l_discount), sum(l_ratio), avg(l_ratio), sum(l_extendedprice) / 7.0,"
        " avg(CAST(l_tax AS DECIMAL(12,2))) FROM lineitem"
    )
    (expected,) = in_postgres(dss["dss_c"], source_db.password, query)
    for pushdown in (True, False):
        (actual,) = through_kyma(engines["dss_c"], query, pushdown=pushdown)
        assert all(isinstance(v, Decimal) for v in actual), actual
        assert actual == expected  # Decimal equality: every digit Postgres gives


def test_icu_text_order_is_pushed_or_refused(engines, dss, source_db) -> None:  # type: ignore[no-untyped-def]
    query = "SELECT c_name, c_mktsegment FROM customer ORDER BY lower(c_mktsegment), c_name"
    expected = in_postgres(dss["dss_icu"], source_db.password, query)
    assert rows_equal(expected, through_kyma(engines["dss_icu"], query, pushdown=True), True)
    with pytest.raises(UnsupportedStatementError, match="collation 'en-US'"):
        through_kyma(engines["dss_icu"], query, pushdown=False)
    for text in ("SELECT MIN(c_name) FROM customer", "SELECT 1 FROM customer WHERE c_name < 'b'"):
        with pytest.raises(UnsupportedStatementError, match="collation"):
            through_kyma(engines["dss_icu"], text, pushdown=False)


def test_a_query_on_one_connection_goes_down_whole(engines) -> None:  # type: ignore[no-untyped-def]
    query = next(q for q in QUERIES if "NOT EXISTS" in q and "substring" in q)
    sql = re.sub(rf"\b({TABLES})\b(?!\.)", r"src.public.\1", query)
    answer = engines["dss_icu"].execute(sql)
    (scan,) = answer.pushdown_summary
    assert scan["residual"] == [], scan
