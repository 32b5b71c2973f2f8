"""``real`` (float4), kyma against a loopback Postgres: casts to real, its text, Postgres's
operator typing (real op real is real; with an integer, a numeric or a double it is double
precision), the math functions of double precision only, ``sum`` accumulated in float4,
comparisons with integers, and the range errors. On main ``x::real`` was a double: each of
these gave a double's digits (``0.3333333333333333`` for ``0.33333334``) or infinity.
"""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError


def _spread() -> list[str]:
    """Texts of reals: whole numbers, fractions, both sides of 1e-4 and 1e6 (where Postgres
    switches float4 to exponent form), float4's extremes and seeded random bit patterns."""
    values = [0.1, 0.2, 1 / 3, 2 / 3, 0.5, 1.0, 2.0, 12345.0, 999999.0, 1e6, 1234567.0]
    values += [16777217.0, 1e-4, 9.9999e-5, 1e-5, 1.5e-7, 3.4028235e38, 1.1754944e-38, 1e-45]
    values += [-0.1, -1e6, -7.25, 123456.7, 65504.0, 0.0]
    rng = random.Random(33)
    while len(values) < 110:
        (value,) = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))
        if math.isfinite(value):
            values.append(value)
    values += [rng.random() * 10 ** rng.randint(-6, 9) for _ in range(40)]
    return [repr(float(np.float32(v))) for v in values] + ["-0", "NaN", "Infinity", "-Infinity"]


TEXTS = _spread()
REALS = "(VALUES " + ", ".join(f"({i}, CAST('{t}' AS REAL))" for i, t in enumerate(TEXTS)) + ")"


def _same(kyma, postgres: psycopg.Connection, sql: str) -> None:  # type: ignore[no-untyped-def]
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "expression",
    [
        "x::text",
        "x || '|'",
        "concat(x, '|')",
        "(-x)::text",
        "abs(x)::text",
        "(x / 3::real)::text",  # real op real: a real
        "(x * x)::real::text",
        "(x + 1)::text",  # real op integer: double precision
        "(x * 1.5)::text",  # real op numeric: double precision
        "(2 - x)::text",
        "(x / 7)::text",
        "(x + 0.1::float8)::text",  # real op double: double precision
        "x::float8::text",
        "sqrt(abs(x))::text",
        "ceil(x)::text",
        "floor(x / 3::real)::text",
        "coalesce(x, 0)::text",
    ],
)
def test_real_values_as_postgres(expression: str, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    # Where a real result would leave float4's range both refuse (the range test below).
    inside = "WHERE x = 0 OR abs(x) BETWEEN 1e-15 AND 1e15" if "::real" in expression else ""
    _same(kyma, postgres, f"SELECT i, {expression} FROM {REALS} AS t(i, x) {inside} ORDER BY i")


def test_constants_cast_to_real(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(
        kyma,
        postgres,
        "SELECT (1::real / 3::real)::text, 1234567::real::text, 1e6::real::text,"
        " 999999::real::text, 1e-5::real::text, 'NaN'::real::text, '-0'::real::text,"
        " 'Infinity'::float4::text, CAST(16777217 AS REAL)::text, (1::real / 3)::text,"
        " 0.1::real + 0.2, 2.5::real::int, 3.5::real::int, (CAST(1 AS float(10)) / 3)::text,"
        " (CAST(1 AS float(24)) / 3::real)::text, (CAST(1 AS float(25)) / 3::real)::text",
    )


def test_comparisons_with_integers_are_in_double_precision(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(
        kyma,
        postgres,
        "SELECT 16777217 = 16777217::real, 16777217 < 16777217::real, 0.1::real = 0.1,"
        " 0.1::real < 0.1::float8, 1::real = 1",
    )


def test_sum_of_reals_accumulates_in_float4(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    tenths = "(SELECT i, 0.1::real AS x, i % 3 AS g FROM generate_series(1, 1000) AS s(i)) AS t"
    _same(kyma, postgres, f"SELECT sum(x)::text, avg(x)::text, (sum(x) + 1)::text FROM {tenths}")
    grouped = f"SELECT g, sum(x)::text, avg(x)::text FROM {tenths} GROUP BY g ORDER BY g"
    _same(kyma, postgres, grouped)
    two = "(VALUES (CAST('0.1' AS REAL)), (CAST('0.2' AS REAL))) AS t(x)"
    _same(kyma, postgres, f"SELECT sum(x)::text, min(x)::text, max(x)::text FROM {two}")
    _same(kyma, postgres, f"SELECT sum(DISTINCT x)::text FROM {two}")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1e40::real",
        "SELECT '1e40'::real",
        "SELECT '1e-46'::real",
        "SELECT 1e39::float8::real",
        "SELECT '3.4e38'::real * '10'::real",
        "SELECT '1e-30'::real * '1e-30'::real",
        "SELECT sum(x) FROM (VALUES ('3e38'::real), ('3e38'::real)) AS t(x)",
    ],
)
def test_out_of_float4_range_is_22003_as_in_postgres(sql: str, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        postgres.execute(sql)
    with pytest.raises(KymaError) as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "22003"


def test_a_real_cast_to_numeric_is_refused(kyma) -> None:  # type: ignore[no-untyped-def]
    # Postgres keeps 6 significant digits (1234567.9::real::numeric is 1234570).
    with pytest.raises(KymaError, match="6 significant digits") as refused:
        kyma("SELECT 1234567.9::real::numeric")
    assert status(refused.value, "sqlstate") == "0A000"
