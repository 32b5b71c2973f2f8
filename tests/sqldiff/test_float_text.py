"""Floats as text, kyma against a loopback Postgres: the same statements over the same values
(whole numbers, fractions, both sides of the points where Postgres switches to exponent form
— 1e-4/1e-5, 1e15/1e16/1e17 —, the largest and smallest doubles, -0, ±Infinity, NaN and
seeded random bit patterns) must give the same text. ``engine.query.pg_float``.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator

import numpy as np
import psycopg
import pyarrow as pa
import pytest

from kyma.engine.query.pg_float import postgres_text


def _spread() -> list[float]:
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 2.2250738585072014e-308]
    values += [1.7976931348623157e308, 0.1, 0.2 + 0.1, 1 / 3, 2.0**53, 2.0**53 + 2]
    values += [float(n) for n in (-3, -1, 1, 2, 10, 100, 12345, 999999, 1000000, 1234567)]
    for power in (-325, -308, -20, -7, -6, -5, -4, -3, 0, 5, 6, 7, 14, 15, 16, 17, 20, 22, 23):
        for mantissa in (1.0, 1.5, 9.999999, 1.2345678901234567, 5.0, 9.5):
            value = float(f"{mantissa}e{power}")
            values += [value, math.nextafter(value, 0), math.nextafter(value, math.inf), -value]
    rng = random.Random(33)
    values += [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(150)
    ]
    values += [rng.random() * 10 ** rng.randint(-8, 24) for _ in range(150)]
    values += [round(rng.random() * 1000, rng.randint(0, 4)) for _ in range(50)]
    return values


VALUES = _spread()
CHUNK = 300


def _chunks() -> Iterator[list[tuple[int, str]]]:
    texts = ["NaN" if math.isnan(v) else repr(v).replace("inf", "Infinity") for v in VALUES]
    numbered = list(enumerate(texts))
    for start in range(0, len(numbered), CHUNK):
        yield numbered[start : start + CHUNK]


def _select(expression: str, chunk: list[tuple[int, str]]) -> str:
    rows = ", ".join(f"({i}, '{text}')" for i, text in chunk)
    return f"SELECT i, {expression} FROM (VALUES {rows}) AS t(i, v) ORDER BY i"


CONVERSIONS = [
    "CAST(CAST(v AS DOUBLE PRECISION) AS TEXT)",
    "CAST(v AS float8)::varchar",
    "CAST(v AS DOUBLE PRECISION) || '|'",
    "'<' || CAST(v AS DOUBLE PRECISION)",
    "concat(CAST(v AS DOUBLE PRECISION), '|')",
    "CAST(-CAST(v AS DOUBLE PRECISION) AS TEXT)",
]


@pytest.mark.parametrize("expression", CONVERSIONS)
def test_float_to_text_as_postgres(expression: str, kyma, postgres: psycopg.Connection) -> None:  # type: ignore[no-untyped-def]
    for chunk in _chunks():
        sql = _select(expression, chunk)
        expected = postgres.execute(sql).fetchall()  # type: ignore[call-overload]
        assert kyma(sql)[1] == expected


def test_a_float_column_as_text(kyma, postgres: psycopg.Connection) -> None:  # type: ignore[no-untyped-def]
    finite = [(i, repr(v)) for i, v in enumerate(VALUES) if math.isfinite(v)][:200]
    for run in (kyma, postgres.execute):
        run("CREATE TABLE f (id INTEGER, x DOUBLE PRECISION)")
        run("INSERT INTO f VALUES " + ", ".join(f"({i}, '{text}'::float8)" for i, text in finite))
    sql = "SELECT id, x::text, 'x=' || x, (x + 1)::text, (-x)::text FROM f ORDER BY id"
    assert kyma(sql)[1] == postgres.execute(sql).fetchall()


def test_numeric_literals_stay_numeric(kyma, postgres: psycopg.Connection) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT 2.0::text, 1.5::text, 2.0 || 'a', sqrt(4)::text, ln(1)::text"
    assert kyma(sql)[1] == postgres.execute(sql).fetchall()


@pytest.mark.parametrize("kind", ["float8", "float4"])
def test_arrow_floats_as_postgres_writes_them(kind: str, postgres: psycopg.Connection) -> None:
    """The function itself on both widths (kyma SQL's ``real`` is a double, so float4
    arrives only in fetched or written columns: the pgwire text of a float4 column)."""
    dtype = np.float64 if kind == "float8" else np.float32
    with np.errstate(over="ignore"):
        values = np.array([v for v in VALUES if not abs(v) > 3e38 or kind == "float8"], dtype)
    texts = [
        str(v.item()) if math.isfinite(v) else str(v.item()).replace("inf", "Infinity")
        for v in values
    ]
    found = postgres.execute(  # type: ignore[call-overload]
        f"SELECT x::{kind}::text FROM unnest(%s::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i",
        ([t.replace("nan", "NaN") for t in texts],),
    ).fetchall()
    assert postgres_text(pa.array(values)).to_pylist() == [row[0] for row in found]
