"""The front door's bounds on what segfaulted DataFusion, in process: set-operation chains,
query blocks and table references past KYMA_MAX_PLAN_RELATIONS are 54001 before anything
plans; text too long to be a numeric is 22003 when cast to a decimal, stored or literal,
while short text, numbers and columns of numbers cast as before."""

from __future__ import annotations

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import OutOfRangeError, StatementTooComplexError
from kyma.engine.query import QueryEngine, QueryLimits
from kyma.engine.query.rewrite.numeric_input import MAX_NUMERIC_INPUT

LIMIT = 12


@pytest.fixture
def engine(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (s string, n long)")
    services.write_path.ingest_ndjson("t", b'{"s": "12.50", "n": 3}\n{"s": "-7", "n": 4}\n')
    return QueryEngine(
        services.catalog,
        services.store,
        services.format,
        limits=QueryLimits(max_plan_relations=LIMIT),
    )


@pytest.mark.parametrize(
    "sql",
    [
        " UNION ALL ".join(["SELECT 1"] * (LIMIT + 1)),
        " INTERSECT ".join(["(SELECT 1 UNION SELECT 2)"] * 7),
        "WITH a0 AS (SELECT 1 AS x), "
        + ", ".join(f"a{i} AS (SELECT x FROM a{i - 1})" for i in range(1, 7))
        + " SELECT * FROM a6",
        "SELECT 1 FROM " + ", ".join(f"t AS t{i}" for i in range(LIMIT + 1)),
    ],
)
def test_too_many_relations_is_54001(engine: QueryEngine, sql: str) -> None:
    with pytest.raises(StatementTooComplexError, match="exceed the limit 12") as refused:
        engine.execute(sql)
    assert status(refused.value, "sqlstate") == "54001"
    assert status(refused.value, "http") == 400


def test_words_in_strings_and_comments_are_not_branches(engine: QueryEngine) -> None:
    words = " ".join(["union"] * 40)
    answer = engine.execute(f"SELECT '{words}' AS w -- {words}\nUNION SELECT 'x'")
    assert answer.table.num_rows == 2


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT CAST(repeat('1', {MAX_NUMERIC_INPUT + 1}) AS DECIMAL(38, 0))",
        f"SELECT '{'1' * (MAX_NUMERIC_INPUT + 1)}'::numeric",
        f"SELECT {'9' * (MAX_NUMERIC_INPUT + 1)}",
        f"SELECT (s || repeat('0', {MAX_NUMERIC_INPUT}))::numeric FROM t",
    ],
)
def test_text_too_long_for_a_numeric_is_22003(engine: QueryEngine, sql: str) -> None:
    with pytest.raises(OutOfRangeError, match="value overflows numeric format") as refused:
        engine.execute(sql)
    assert status(refused.value, "sqlstate") == "22003"


def test_short_text_and_numbers_cast_as_before(engine: QueryEngine) -> None:
    answer = engine.execute(
        "SELECT s::numeric AS a, CAST(n AS DECIMAL(10, 2)) AS b, CAST(n + 1 AS NUMERIC) AS c,"
        " CAST(length(s) AS NUMERIC) AS d FROM t ORDER BY n"
    )
    rows = [[str(v) for v in row.values()] for row in answer.table.to_pylist()]
    assert rows == [
        ["12.5000000000", "3.00", "4.0000000000", "5.0000000000"],
        ["-7.0000000000", "4.00", "5.0000000000", "2.0000000000"],
    ]


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT CAST(repeat('1', {MAX_NUMERIC_INPUT + 1}) AS NUMERIC)",
        f"SELECT '{'1' * (MAX_NUMERIC_INPUT + 1)}'::numeric",
        f"SELECT {'9' * (MAX_NUMERIC_INPUT + 1)}",
    ],
)
def test_postgres_refuses_the_same_text_with_22003(pg_server_url: str, sql: str) -> None:
    refused = pytest.raises(psycopg.errors.NumericValueOutOfRange, match="overflows numeric")
    with psycopg.connect(pg_server_url) as conn, refused:
        conn.execute(sql)
