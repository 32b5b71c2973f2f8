"""Numeric arithmetic of columns written as Postgres writes it, kyma against a loopback
Postgres: the scale of each quotient and average of numeric columns (``select_div_scale``),
a fractional literal next to an integer column, and the numeric-only math functions kyma
refuses rather than answer as doubles. Each differed on main (a different text, or a double
where Postgres computes in numeric).
"""

from __future__ import annotations

import random

import psycopg
import pytest

from kyma.engine.errors import KymaError


def _same(kyma, postgres: psycopg.Connection, sql: str) -> None:  # type: ignore[no-untyped-def]
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql  # type: ignore[call-overload]


def _pairs(rows: list[tuple[str, str]], x: str, y: str) -> str:
    """A derived table ``t(i, x, y)`` of numerics typed ``x`` and ``y``."""
    values = ", ".join(
        f"({i}, CAST('{a}' AS {x}), CAST('{b}' AS {y}))" for i, (a, b) in enumerate(rows)
    )
    return f"(VALUES {values}) AS t(i, x, y)"


PAIRS = [
    ("14836.00", "572"), ("1", "3"), ("-2", "3"), ("0", "7"), ("2", "0.0003"),
    ("0.0001", "3"), ("9999.99", "9999.99"), ("123456789.12", "0.07"), ("-0.05", "-1234"),
    ("1", "9999"), ("1", "10000"), ("10000", "1"), ("5", "2"), ("0.5", "0.25"),
]  # fmt: skip


def test_a_quotient_of_numeric_columns_has_each_value_s_scale(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(33)
    rows = PAIRS + [
        (
            f"{rng.randint(-(10**9), 10**9) / 100:.2f}",
            str(rng.choice([-1, 1]) * rng.randint(1, 10**6)),
        )
        for _ in range(60)
    ]
    for x, y in [("numeric(12, 2)", "numeric(10, 4)"), ("numeric(14, 4)", "numeric(12, 4)")]:
        table = _pairs(rows, x, y)
        columns = "(x / y)::text, x / y || '', concat(x / y, ''), (y / x)::text"
        _same(kyma, postgres, f"SELECT i, {columns} FROM {table} WHERE x <> 0 ORDER BY i")


def test_an_average_of_a_numeric_column_has_postgres_s_scale(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    table = _pairs(PAIRS, "numeric(12, 2)", "numeric(10, 4)")
    _same(
        kyma, postgres, f"SELECT avg(x)::text, avg(y)::text, (sum(x) / count(*))::text FROM {table}"
    )
    grouped = f"SELECT i % 3, avg(y)::text, avg(x + i)::text FROM {table} GROUP BY 1 ORDER BY 1"
    _same(kyma, postgres, grouped)
    window = f"SELECT i, (avg(x) OVER (PARTITION BY i % 2 ORDER BY i))::text FROM {table}"
    _same(kyma, postgres, window + " ORDER BY i")
    _same(
        kyma,
        postgres,
        f"SELECT avg(DISTINCT y)::text, avg(x) FILTER (WHERE i > 3)::text FROM {table}",
    )


def test_a_literal_next_to_an_integer_column_keeps_its_scale(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    table = "(VALUES (1, 0.5::float8), (-2, 2.25::float8), (0, 0::float8)) AS t(n, f)"
    columns = [
        "(n + 0.10)::text", "(n * 1.50)::text", "(n - 0.5)::text", "(0.25 * n + 1)::text",
        "(n + 0.10) || ''", "(f + 0.10)::text", "(n * 2.0 + f)::text",
    ]  # fmt: skip
    _same(kyma, postgres, f"SELECT n, {', '.join(columns)} FROM {table} ORDER BY n")


@pytest.mark.parametrize(
    "call",
    ["sqrt(2.0)", "power(1.5, 2)", "ln(2.0)", "exp(1.0)", "log(2.0)", "power(2, 0.5)", "sqrt(x)"],
)
def test_numeric_math_is_refused_rather_than_computed_as_double(kyma, postgres, call: str) -> None:  # type: ignore[no-untyped-def]
    sql = f"SELECT {call} FROM (VALUES (CAST('2.25' AS numeric(5, 2)))) AS t(x)"
    postgres.execute(sql)  # type: ignore[call-overload]  # Postgres answers, in numeric
    with pytest.raises(KymaError, match="is computed in numeric by Postgres"):
        kyma(sql)


def test_math_of_integers_and_floats_is_answered_as_postgres(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(
        kyma, postgres, "SELECT sqrt(2), ln(10), exp(1), sqrt(2.0::float8), power(2.5::float8, 2)"
    )
