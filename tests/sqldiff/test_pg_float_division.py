"""A float division by zero, kyma against a loopback Postgres: 22012 as Postgres raises it
(``float8div``, ``float4div``), where DataFusion answered ``Infinity`` or ``NaN``; a NaN
dividend, a null on either side and a zero never divided by stay answers.
"""

from __future__ import annotations

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

ROWS = (
    "(VALUES (1, 1.5::float8, 2::float8, 3::real, 4), (2, -2.0, 0.5, 0.25::real, -3),"
    " (3, 'NaN', 0, 2::real, 0), (4, NULL, 0, 0::real, 0), (5, 7, NULL, 1::real, 2))"
    " AS t(i, x, y, r, n)"
)


def _same(kyma, postgres: psycopg.Connection, sql: str) -> None:  # type: ignore[no-untyped-def]
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1.0::float8 / 0",
        "SELECT 1 / 0::float8",
        "SELECT 0::float8 / 0::float8",
        "SELECT 1::real / 0::real",
        "SELECT -1.5::real / 0",
        "SELECT 2.5 / 0::float8",
        f"SELECT n / y FROM {ROWS}",  # int / double: 0 / 0 on row 3
        f"SELECT r / (n - n) FROM {ROWS}",
        f"SELECT sum(y) / count(*) FILTER (WHERE i > 9) FROM {ROWS}",
    ],
)
def test_a_float_division_by_zero_is_22012_as_in_postgres(sql: str, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(psycopg.errors.DivisionByZero):
        postgres.execute(sql)
    with pytest.raises(KymaError, match="division by zero") as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "22012"


def test_float_divisions_that_postgres_answers(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    # NaN / 0 is NaN; a null dividend or divisor is null; CASE divides only the rows it picks.
    _same(kyma, postgres, f"SELECT i, (x / y)::text FROM {ROWS} WHERE i <> 1 ORDER BY i")
    _same(kyma, postgres, "SELECT ('NaN'::float8 / 0)::text, ('NaN'::real / 0::real)::text")
    mixed = f"SELECT i, (r / n)::text, (n / r)::text FROM {ROWS} WHERE n <> 0 ORDER BY i"
    _same(kyma, postgres, mixed)
    guarded = f"SELECT i, CASE WHEN n = 0 THEN NULL ELSE x / n END FROM {ROWS} ORDER BY i"
    _same(kyma, postgres, guarded)
    _same(kyma, postgres, f"SELECT i, x / nullif(n, 0), (r / 3::real)::text FROM {ROWS} ORDER BY i")
