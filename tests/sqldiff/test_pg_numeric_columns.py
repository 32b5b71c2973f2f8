"""Numeric results written as Postgres writes them, kyma against a loopback Postgres: a
quotient or an average returned as a result column with each value's own scale, ``avg`` of
an integer column of kyma's own tables as numeric, number literals in ``VALUES`` as
numeric, and ``log(b, x)`` in numeric. Each differed on main (20 decimals for every value,
a double, a float column, a double).

Postgres's numerics are read as their text (psycopg's text loader); kyma's engine answers
a quotient column as that text (a column marked numeric, read as a Decimal of those
digits by the harness) and other decimals as Decimals, compared by their text.
"""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest
from psycopg.types.string import TextLoader

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

PAIRS = [
    ("14836.00", "572"), ("1", "3"), ("-2", "3"), ("0", "7"), ("2", "0.0003"),
    ("0.0001", "3"), ("9999.99", "9999.99"), ("123456789.12", "0.07"), ("-0.05", "-1234"),
    ("1", "9999"), ("1", "10000"), ("10000", "1"), ("5", "2"), ("0.5", "0.25"), ("1.2", "1"),
    ("6", "5"), ("0.0001", "7"),
]  # fmt: skip


def _text(value: object) -> object:
    return format(value, "f") if isinstance(value, Decimal) else value


def _postgres(conn: psycopg.Connection, sql: str) -> list[tuple[object, ...]]:
    cur = conn.cursor()
    cur.adapters.register_loader("numeric", TextLoader)
    return cur.execute(sql).fetchall()  # type: ignore[call-overload]


def _same(kyma, postgres: psycopg.Connection, sql: str) -> None:  # type: ignore[no-untyped-def]
    answered = [tuple(_text(v) for v in row) for row in kyma(sql)[1]]
    assert answered == _postgres(postgres, sql), sql


def _pairs(x: str, y: str) -> str:
    values = ", ".join(
        f"({i}, CAST('{a}' AS {x}), CAST('{b}' AS {y}))" for i, (a, b) in enumerate(PAIRS)
    )
    return f"(VALUES {values}) AS t(i, x, y)"


TABLE = _pairs("numeric(14, 4)", "numeric(10, 4)")


def test_a_quotient_returned_as_a_column_has_each_value_s_scale(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    # 0.0001 / 3 has 24 decimals: as a result column it is answered (it was refused)
    _same(kyma, postgres, f"SELECT i, x / y, y / NULLIF(x, 0) AS r FROM {TABLE} ORDER BY i")
    # sorted by the quotient's value, not by its text (a sort key keeps 20 decimals)
    short = f"{TABLE} WHERE i NOT IN (5, 8, 10, 16)"
    _same(kyma, postgres, f"SELECT x / y AS q, i FROM {short} ORDER BY q DESC, i")
    _same(kyma, postgres, f"SELECT i, x / y FROM {short} ORDER BY 2, 1 LIMIT 5")


def test_an_average_returned_as_a_column_has_postgres_s_scale(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(kyma, postgres, f"SELECT avg(x), avg(y), sum(x) / count(*) FROM {TABLE}")
    grouped = f"SELECT i % 3 AS g, avg(y), avg(x + i) FROM {TABLE} GROUP BY 1 ORDER BY 2"
    _same(kyma, postgres, grouped)
    window = f"SELECT i, avg(x) OVER (PARTITION BY i % 2 ORDER BY i) FROM {TABLE} ORDER BY i"
    _same(kyma, postgres, window)
    _same(kyma, postgres, f"SELECT avg(DISTINCT y), avg(x) FILTER (WHERE i > 3) FROM {TABLE}")


def test_avg_of_an_integer_column_of_a_kyma_table_is_numeric(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for sql in (
        "CREATE TABLE ints(g INTEGER, s SMALLINT, n INTEGER, b BIGINT)",
        "INSERT INTO ints VALUES (1, 1, 1, 9000000000000000000), (1, 2, 2, 9000000000000000000),"
        " (2, 7, 10, -3), (2, NULL, NULL, NULL), (3, -1, 4, 5), (3, 2, 5, 6), (3, 2, 5, 7)",
    ):
        kyma(sql)
        postgres.execute(sql)  # type: ignore[call-overload]
    _same(kyma, postgres, "SELECT avg(s), avg(n), avg(b) FROM ints")
    _same(kyma, postgres, "SELECT g, avg(n), avg(b)::text FROM ints GROUP BY g ORDER BY g")
    _same(kyma, postgres, "SELECT avg(DISTINCT n), avg(n) FILTER (WHERE g > 1) FROM ints")
    window = "SELECT g, n, avg(n) OVER (PARTITION BY g ORDER BY n) FROM ints"
    _same(kyma, postgres, window + " ORDER BY g, n")
    # INSERT … SELECT takes the averages as decimals (the sink's path)
    for sql in (
        "CREATE TABLE avgs(g INTEGER, a DOUBLE PRECISION)",
        "INSERT INTO avgs SELECT g, avg(n) FROM ints GROUP BY g",
    ):
        kyma(sql)
        postgres.execute(sql)  # type: ignore[call-overload]
    _same(kyma, postgres, "SELECT g, a FROM avgs ORDER BY g")


def test_number_literals_in_values_are_numeric(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    table = "(VALUES (1, 1.5), (2, 2.50), (3, 0.25), (4, NULL)) AS t(i, x)"
    _same(kyma, postgres, f"SELECT max(x), min(x), sum(x), (max(x) * 2)::text FROM {table}")
    _same(kyma, postgres, f"SELECT i, x * 1e0::float8, x > 2.4 FROM {table} ORDER BY i")
    mixed = "(VALUES (0.1, 0.2::float8), (0.7, 0.1::float8)) AS t(x, f)"
    _same(kyma, postgres, f"SELECT (x + f)::text, x + f FROM {mixed}")


def test_log_of_two_numbers_is_computed_in_numeric(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(
        kyma,
        postgres,
        "SELECT log(2, 8), log(10, 1000), log(2.0, 8)::text, log(3, 10), log(7, 0.5),"
        " log(10, 2), log(16, 4), log(100), log10(100)",
    )
    for sql, sqlstate in (("SELECT log(0, 8)", "2201E"), ("SELECT log(1, 8)", "22012")):
        with pytest.raises(psycopg.Error) as refused:
            postgres.execute(sql)  # type: ignore[call-overload]
        assert refused.value.sqlstate == sqlstate
        with pytest.raises(KymaError) as error:
            kyma(sql)
        assert status(error.value, "sqlstate") == sqlstate


def test_log_of_integer_columns_is_refused(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT log(b, x) FROM (VALUES (2, 8)) AS t(b, x)"
    assert _postgres(postgres, sql) == [("3.0000000000000000",)]
    with pytest.raises(KymaError, match="is computed in numeric by Postgres"):
        kyma(sql)


def test_a_quotient_column_under_a_limit_is_divided_for_the_rows_kept(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for sql in (
        "CREATE TABLE visits(k INTEGER, w INTEGER, r INTEGER)",
        "INSERT INTO visits SELECT i % 37, i % 1000 + i / 7, i % 2"
        " FROM generate_series(1, 3000) AS s(i)",
    ):
        kyma(sql)
        postgres.execute(sql)  # type: ignore[call-overload]
    grouped = "SELECT k, count(*) AS c, sum(r), avg(w) FROM visits GROUP BY k"
    _same(kyma, postgres, f"{grouped} ORDER BY c DESC, k LIMIT 5")
    _same(kyma, postgres, f"{grouped} ORDER BY 2, 1 DESC LIMIT 4 OFFSET 3")
    _same(kyma, postgres, f"{grouped} ORDER BY max(w) DESC NULLS LAST, k LIMIT 3")
    _same(kyma, postgres, f"{grouped} ORDER BY avg(w) DESC, k LIMIT 3")  # by the quotient
    _same(kyma, postgres, f"{grouped} ORDER BY 4, k LIMIT 3")
    ctes = "WITH v AS (SELECT * FROM visits WHERE r = 1) SELECT k, sum(w) / 7.0 AS a FROM v"
    _same(kyma, postgres, f"{ctes} GROUP BY k ORDER BY k LIMIT 6")
    # the quotient is computed above the limit: the plan divides after its sort keeps 5 rows
    plan = "\n".join(row[1] for row in kyma(f"EXPLAIN {grouped} ORDER BY c DESC, k LIMIT 5")[1])
    physical = plan[plan.index("ProjectionExec") :]
    assert physical.index("kyma_numeric_div_column") < physical.index("SortExec: TopK")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT avg(n) / 3 FROM ints",
        "SELECT (avg(n) + 1) / 1e6 FROM ints",
        "SELECT 10 / avg(s) FROM ints",
        "SELECT avg(n / 7.0)::float8 FROM ints",
        "SELECT round(avg(n), 4) / 3 FROM ints",
    ],
)
def test_a_quotient_divided_again_is_refused(sql: str, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    # Postgres divides avg(n) at its own scale (16 decimals for these): kyma's one scale of 20
    # would give other digits
    assert _postgres(postgres, sql)
    with pytest.raises(KymaError, match="divided .or averaged. again") as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "0A000"
    cast = sql.replace("avg(n)", "avg(n)::float8").replace("avg(s)", "avg(s)::float8")
    if "7.0" not in cast and "round" not in cast:  # cast first: a double, divided as Postgres does
        _same(kyma, postgres, cast)


def test_a_product_of_averages_past_38_digits_is_refused_in_words(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT avg(n) * avg(s) FROM ints"
    assert _postgres(postgres, sql)  # Postgres's numeric has room for both scales
    with pytest.raises(KymaError, match="more than the 38 digits") as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "0A000"
