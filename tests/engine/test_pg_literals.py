"""Literals, casts, integer arithmetic and error SQLSTATEs, differentially against Postgres.

The same rows are in a kyma table and in a table of a loopback Postgres (the oracle); every
statement runs on both: the answers must be equal (numbers by value, floats within 1e-9),
or both must fail with the same SQLSTATE (and kyma's error be a 4xx over HTTP).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError
from kyma.engine.storage.local import LocalStore
from kyma.services import Services, wire_services
from kyma.settings import Settings
from kyma.stores import Stores

ROWS = "('auth', 1, 10, 1.5), ('cart', 2, 20, 2.5), ('x', 2147483647, 9223372036854775807, 0.5)"


@pytest.fixture(scope="module")
def kyma(module_catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    home: Path = tmp_path_factory.mktemp("literals")
    stores = Stores.open(module_catalog_url)
    settings = Settings(home=home / "home", catalog_url=module_catalog_url, block_rows=1024)
    services = wire_services(settings, stores, LocalStore(home / "objects"))
    services.query.execute("CREATE TABLE t (service_name string, n int, b long, f real)")
    services.query.execute(f"INSERT INTO t VALUES {ROWS}")
    yield services
    services.close()
    stores.close()


@pytest.fixture(scope="module")
def oracle(module_catalog_url: str) -> Iterator[psycopg.Connection]:
    """Postgres with the same table, in a schema of its own beside kyma's catalog."""
    with psycopg.connect(module_catalog_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA oracle")
        conn.execute("SET search_path TO oracle")
        conn.execute("CREATE TABLE t (service_name text, n int, b bigint, f float8)")
        conn.execute(f"INSERT INTO t VALUES {ROWS}")
        yield conn


def _value(value: Any) -> Any:
    """One cell, comparable across the two engines."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | Decimal):
        return Decimal(value).normalize()
    if isinstance(value, float):
        return value if math.isnan(value) else round(value, 9)
    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _kyma(services: Services, sql: str) -> list[tuple[Any, ...]] | str:
    try:
        table = services.query.execute(sql).table
    except KymaError as error:
        assert 400 <= int(status(error, "http")) < 500, f"{error!r} is not a 4xx"
        return str(status(error, "sqlstate"))
    return [tuple(_value(v) for v in row.values()) for row in table.to_pylist()]


def _postgres(conn: psycopg.Connection, sql: str) -> list[tuple[Any, ...]] | str:
    try:
        rows = conn.execute(sql).fetchall()
    except psycopg.Error as error:
        assert error.sqlstate is not None
        return error.sqlstate
    return [tuple(_value(v) for v in row) for row in rows]


ARRAYS = [
    "SELECT count(*) FROM t WHERE service_name = ANY('{auth,cart}'::text[])",
    "SELECT count(*) FROM t WHERE service_name <> ALL('{auth, cart}'::text[])",
    "SELECT count(*) FROM t WHERE service_name = ANY(ARRAY['auth', 'nope'])",
    """SELECT '{"a,b","c\\"d", "e f" , g h }'::text[]""",
    "SELECT '{a,NULL,null}'::text[], '{\"NULL\"}'::text[] AS quoted",
    "SELECT '{{1,2},{3,4}}'::int[]",
    "SELECT '{ 1 , 2 }'::int[], '{}'::int[] AS empty",
    "SELECT CAST('{1,2}' AS bigint[]), CAST('{-5}' AS smallint[]) AS s",
    "SELECT '{1.5,2e3,-0.25}'::float8[], '{t,false,yes}'::bool[] AS b",
    "SELECT '{2024-01-01,2024-02-29}'::date[]",
    "SELECT '{\"2024-01-01 10:00:00+00\"}'::timestamptz[]",
    "SELECT 1 = ANY('{1,NULL}'::int[]), 2 = ANY('{1,NULL}'::int[]) AS b",
    "SELECT 2 <> ALL('{1,NULL}'::int[]), 2 <> ALL(ARRAY[1,3]) AS d,"
    " 1 <> ALL('{1,NULL}'::int[]) AS e",
    "SELECT NULL::int = ANY('{}'::int[]), NULL::int <> ALL('{}'::int[]) AS e",
    "SELECT n FROM t WHERE n = ANY('{2,3,2147483647}'::int[]) ORDER BY n",
    "SELECT '{1,2'::int[]",
    "SELECT '{1,{2}}'::int[]",
    "SELECT '{{1,2},{3}}'::int[]",
    "SELECT '{a,,b}'::text[]",
    "SELECT '{a}x'::text[]",
    "SELECT 'a,b'::text[]",
    "SELECT '{abc}'::int[]",
]

CASTS = [
    "SELECT CAST(2.5 AS INTEGER), CAST(-2.5 AS INTEGER) AS m, 2.5::bigint AS b, 2.5::smallint AS s",
    "SELECT 0.5::int, 1.5::int AS a, -0.5::int AS b, 2.4999::int AS c",
    "SELECT 2.5::float8::int, 3.5::float8::int AS b, (-2.5)::float8::int AS c,"
    " 0.5::float8::bigint AS d",
    "SELECT CAST(f AS int), CAST(f AS bigint) AS b, CAST(f * 2 AS smallint) AS s FROM t ORDER BY 1",
    "SELECT 'abc'::int",
    "SELECT '12'::bigint + 1, ' 7 '::int AS padded",
    "SELECT 40000::smallint",
    "SELECT 3000000000::int",
    "SELECT 1e300::float8::bigint",
    "SELECT 'nope'::date",
    "SELECT 'nope'::timestamptz",
    "SELECT 1.239::numeric(4,2), 1.235::numeric(4,2) AS b",
    "SELECT 123.4::numeric(4,2)",
    "SELECT '2024-01-01'::date + 1, '2024-03-01'::date - 1 AS d",
]

INTEGERS = [
    "SELECT n + n FROM t WHERE service_name = 'x'",
    "SELECT n + 1 FROM t WHERE service_name = 'x'",
    "SELECT n - (-1) FROM t WHERE service_name = 'x'",
    "SELECT n * 2 FROM t WHERE service_name = 'x'",
    "SELECT n::bigint + 1, n::bigint * 2 AS m FROM t WHERE service_name = 'x'",
    "SELECT b + 1 FROM t WHERE service_name = 'x'",
    "SELECT -b - 2 FROM t WHERE service_name = 'x'",
    "SELECT n + 1, n * 2 AS x, -n AS y, abs(n) AS z, n - 3 AS w FROM t WHERE n < 10 ORDER BY 1",
    "SELECT 9223372036854775807 + 1",
    "SELECT -9223372036854775807 - 2",
    "SELECT 2147483647 + 1",
    "SELECT 2147483647::bigint + 1",
    "SELECT 46341 * 46341",
    "SELECT 32767::smallint + 1::smallint",
    "SELECT -2147483648 + 0, abs(-2147483647) AS a, -(-2147483648) AS b",
    "SELECT abs(-2147483648)",
    "SELECT 7 / 2, -7 / 2 AS b, 7 % -3 AS c, -7 % 3 AS d",
    "SELECT 7 / 0",
    "SELECT n / 0 FROM t",
    "SELECT n % 0 FROM t",
    "SELECT sum(n), count(*) AS c FROM t",
    "SELECT sum(b) FROM t",
    "SELECT service_name, sum(b) AS s FROM t GROUP BY service_name ORDER BY service_name",
    "SELECT f + 1, f * 2 AS d FROM t ORDER BY 1",
]

ERRORS = [
    "SELECT nosuch FROM t",
    "SELECT t.nosuch FROM t",
    "SELECT * FROM nosuch",
    "SELECT nosuchfn(1)",
]


@pytest.mark.parametrize("sql", ARRAYS + CASTS + INTEGERS + ERRORS)
def test_kyma_answers_as_postgres(kyma: Services, oracle: psycopg.Connection, sql: str) -> None:
    assert _kyma(kyma, sql) == _postgres(oracle, sql)


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("REFRESH MATERIALIZED VIEW CONCURRENTLY m", "kyma refreshes in one commit"),
        # SAVEPOINT outside a block is Postgres's 25P01 (tests/server/test_session_statements_http)
        ("LISTEN x", "LISTEN is not supported: kyma has no asynchronous notifications"),
        ("SELECT CAST(service_name AS text[]) FROM t", "casting a text column to an array"),
        ("SELECT to_char(interval '1 day', 'DD')", "to_char of interval is not supported"),
    ],
)
def test_what_kyma_cannot_do_is_refused_in_words_with_0A000(
    kyma: Services, sql: str, words: str
) -> None:
    with pytest.raises(KymaError) as raised:
        kyma.query.execute(sql)
    assert words in str(raised.value)
    assert status(raised.value, "sqlstate") == "0A000"
    assert status(raised.value, "http") == 400


def test_result_columns_of_array_literals_are_named_by_their_type(kyma: Services) -> None:
    answer = kyma.query.execute("SELECT '{1}'::int[], ARRAY[1]::int[], '{a}'::text[]")
    assert answer.table.column_names == ["int4", "array", "text"]


INSERTS = [
    "INSERT INTO ins VALUES ('a', CAST('12' AS bigint), '1.5', 't', '{1,2,NULL}', '2024-01-01')",
    "INSERT INTO ins VALUES ('b', '12'::bigint, 2, 'yes', ARRAY[3], '2024-01-01T10:00:00Z')",
    "INSERT INTO ins VALUES ('c', 2.5, '-0.25'::float8, NULL, '{}', '2024-01-01'::timestamptz)",
    "INSERT INTO ins VALUES ('d', -2.5, 1e3, true, NULL, NULL)",
    "INSERT INTO ins VALUES ('e', 2.5::float8, 0.1, 'off', '{-4}'::bigint[], NULL)",
    "INSERT INTO ins (s, i) VALUES ('f', '  42 '), ('g', 3.5::real)",
    "INSERT INTO ins VALUES ('x', 'abc', 1, true, NULL, NULL)",
    "INSERT INTO ins VALUES ('x', 3000000000, 1, true, NULL, NULL)",
    "INSERT INTO ins VALUES ('x', '3000000000', 1, true, NULL, NULL)",
    "INSERT INTO ins VALUES ('x', 1, 'one', true, NULL, NULL)",
    "INSERT INTO ins VALUES ('x', 1, 1, 'maybe', NULL, NULL)",
    "INSERT INTO ins VALUES ('x', 1, 1, true, '{1,two}', NULL)",
    "INSERT INTO ins VALUES ('x', 1, 1, true, '{1', NULL)",
    "INSERT INTO ins VALUES ('x', 1, 1, true, NULL, 'tomorrow-ish')",
]


def test_insert_values_read_casts_and_text_as_postgres(
    kyma: Services, oracle: psycopg.Connection
) -> None:
    """Each INSERT succeeds on both or fails with the same SQLSTATE; then the rows agree."""
    kyma.query.execute(
        "CREATE TABLE ins"
        " (s string, i int, f double precision, ok bool, a array(long), ts timestamp)"
    )
    oracle.execute(
        "CREATE TABLE ins (s text, i int, f float8, ok bool, a bigint[], ts timestamptz)"
    )
    for sql in INSERTS:
        kyma_answer, postgres_answer = _kyma(kyma, sql), _postgres_status(oracle, sql)
        assert (sql, kyma_answer if isinstance(kyma_answer, str) else "ok") == (
            sql,
            postgres_answer,
        )
    select = "SELECT s, i, f, ok, a, ts FROM ins ORDER BY s"
    assert _kyma(kyma, select) == _postgres(oracle, select)


def _postgres_status(conn: psycopg.Connection, sql: str) -> str:
    try:
        conn.execute(sql)
    except psycopg.Error as error:
        assert error.sqlstate is not None
        return error.sqlstate
    return "ok"
