"""The gate on pushdown: kyma's federated answer equals the same SQL run in Postgres, pushed
down or evaluated in kyma (``pushdown=False``).

The source database has an ICU en-US collation and the time zone America/New_York; the
generated queries cover projections, nested boolean filters over ints, text, timestamps and
NULLs, LIKE with escapes, aggregates, ORDER BY with NULLS FIRST/LAST and LIMIT.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query_strategies import federated_queries, predicates, rows_close, rows_equal
from source_postgres import SourceDatabase, run_in_postgres

from kyma.connectors.registry import ConnectorRegistry
from kyma.connectors.secrets import SecretPolicy
from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.format.choice import segment_format
from kyma.engine.query import QueryEngine
from kyma.engine.query.pg_numeric import decimals
from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores

EXAMPLES = max(500, settings.default.max_examples)  # the seed's gate: 500 per CI run
SECRET_ENV = "KYMA_SECRET_TEST_PROPERTY_SOURCE"


@pytest.fixture(scope="module")
def engine(pg_server_url, source_db, tmp_path_factory) -> Iterator[QueryEngine]:  # type: ignore[no-untyped-def]
    """One engine with a connector ``src`` for every example (hypothesis reuses it)."""
    name = "t_pushdown_property"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    stores = Stores.open(f"{pg_server_url.rpartition('/')[0]}/{name}")
    catalog = stores.catalog
    home = tmp_path_factory.mktemp("home")
    registry = ConnectorRegistry(
        catalog, stores.connectors, stores.cdc, SecretPolicy(home / "secrets", home)
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv(SECRET_ENV, source_db.password)
        registry.create(
            {
                "name": "src",
                "type": "postgres",
                "connection": {"url": source_db.url, "secret_ref": f"$env:{SECRET_ENV}"},
            }
        )
        store = LocalStore(tmp_path_factory.mktemp("objects"))
        engine = QueryEngine(catalog, store, segment_format(), registry)
        _local_copy_of_ids(engine, store)
        yield engine
    registry.close()
    stores.close()


def _local_copy_of_ids(engine: QueryEngine, store: LocalStore) -> None:
    """A kyma table ``ids(kid)`` with every id of ``public.items``: joining it changes nothing."""
    from kyma.ingest.ledger import Ledger
    from kyma.ingest.write_path import WritePath

    engine.execute("CREATE TABLE ids (kid long)")
    lines = b"".join(b'{"kid": %d}\n' % i for i in range(1, 301))
    ledger = Ledger(engine.catalog.db)  # type: ignore[attr-defined]
    WritePath(engine.catalog, ledger, store, segment_format()).ingest_ndjson("ids", lines)


def _as_kyma(value: object) -> object:
    """Postgres dates read as kyma timestamps: midnight UTC."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return datetime.datetime.combine(value, datetime.time(), datetime.UTC)
    return value


@functools.cache
def _sum_slack(url: str, password: str) -> float:
    ((rows, magnitude),) = run_in_postgres(
        url, "SELECT count(*), sum(abs(score)) FROM public.items", password=password
    )
    return float(rows) * float(magnitude) * 2.0**-52


def float_sum_slack(source_db: SourceDatabase) -> float:
    """How far two orders of summing the float column ``score`` may round apart: n·ε·Σ|x|.
    Postgres sums in heap order, kyma in vectorized chunks; neither order is SQL's answer."""
    return _sum_slack(source_db.url, source_db.password)


def test_federated_answers_equal_postgres(engine: QueryEngine, source_db: SourceDatabase) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(federated_queries("{table}"))
    def check(template: str) -> None:
        expected = run_in_postgres(
            source_db.url, template.format(table="public.items"), password=source_db.password
        )
        expected = [tuple(_as_kyma(v) for v in row) for row in expected]
        query = template.format(table="src.public.items")
        answer = engine.execute(query)
        actual = [tuple(row.values()) for row in decimals(answer.table).to_pylist()]
        ordered = " ORDER BY " in template
        assert rows_equal(expected, actual, ordered), (template, expected[:5], actual[:5])
        (scan,) = answer.pushdown_summary
        assert scan["residual"] == [], scan  # every generated shape runs whole at the source
        # Not pushed, kyma evaluates it all: the same answer, or a refusal to order text
        # under the source's ICU collation (kyma orders by code point).
        try:
            baseline = decimals(engine.execute(query, pushdown=False).table).to_pylist()
        except UnsupportedStatementError as refused:
            assert "collation" in str(refused), (template, refused)
        else:
            unpushed = [tuple(row.values()) for row in baseline]
            slack = float_sum_slack(source_db)
            assert rows_close(expected, unpushed, ordered, slack), (
                template,
                expected[:5],
                unpushed[:5],
            )

    check()


def test_filters_split_under_a_cross_source_join_equal_postgres(
    engine: QueryEngine, source_db: SourceDatabase
) -> None:
    """Nested filters pushed into one side of a join with a kyma table; the join is identity."""

    @settings(
        max_examples=EXAMPLES // 2,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(predicates(2), min_size=1, max_size=3))
    def check(conjuncts: list[str]) -> None:
        where = " AND ".join(conjuncts)
        expected = run_in_postgres(
            source_db.url, f"SELECT id FROM public.items WHERE {where}", password=source_db.password
        )
        answer = engine.execute(
            f"SELECT id FROM src.public.items JOIN ids ON ids.kid = id WHERE {where}"
        )
        actual = [(row["id"],) for row in answer.table.to_pylist()]
        assert rows_equal(expected, actual, ordered=False), (where, len(expected), len(actual))
        (scan,) = answer.pushdown_summary
        assert len(scan["pushed"]["filters"]) == len(conjuncts), scan

    check()
