"""Numbers, times and intervals written and computed as Postgres does, kyma against a loopback
Postgres over a spread of values: a numeric's scale in text, ``round`` of floats, the seconds
of ``extract``/``date_part``, ``interval * n`` and ``/ n``, ``to_char`` with Postgres's
templates, and the names of result columns. Each differed on main (a wrong answer or a
refusal where Postgres answers).
"""

from __future__ import annotations

import itertools

import psycopg
import pytest

from kyma.engine.errors import KymaError


def _same(kyma, postgres: psycopg.Connection, sql: str) -> None:  # type: ignore[no-untyped-def]
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql  # type: ignore[call-overload]


NUMERIC_TEXT = [
    "1.50::text", "(1.50 + 1)::text", "(1.50 * 2.0)::text", "(2.50 - 0.5)::text",
    "1.50 || 'x'", "(-0.10)::text", "1e5::text", "1.50e1::text", "1.5e-7::text",
    "(0.1 + 0.2)::text", "abs(-1.50)::text", "CAST(1.239 AS NUMERIC(5, 2))::text",
    "(1.0 / 3)::text", "round(2.567, 2)::text", "round(-2.5)::text", "(7 * 0.25)::text",
]  # fmt: skip


def test_numeric_literals_keep_their_scale_in_text(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(kyma, postgres, "SELECT " + ", ".join(NUMERIC_TEXT))


FLOATS = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4999999999999996, 0.49999999999999994, 1e15 + 0.5]
FLOATS += [4503599627370495.5, 123456.5, -7.25, 12.75, 0.0]


def test_round_of_a_float_is_half_to_even(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    rows = ", ".join(f"({i}, '{v!r}')" for i, v in enumerate(FLOATS))
    sql = f"SELECT i, round(CAST(v AS float8)) FROM (VALUES {rows}) AS t(i, v) ORDER BY i"
    _same(kyma, postgres, sql)
    _same(kyma, postgres, "SELECT round(2.5), round(-2.5), round(0.5), round(1.4999)")


def test_round_of_a_float_to_places_is_refused_as_postgres(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT round(2.5::float8, 1)"
    with pytest.raises(psycopg.errors.UndefinedFunction):
        postgres.execute(sql)
    with pytest.raises(KymaError, match=r"round\(double precision, integer\) does not exist"):
        kyma(sql)


INTERVALS = [
    "1 minute 1.5 seconds", "-1 minute -1.5 seconds", "1 day 02:03:04.567891", "3 days",
    "1 month", "1 year 2 months", "-5 hours", "59.999999 seconds", "0 seconds",
]  # fmt: skip
STAMPS = [
    "2026-03-04 05:06:07.25", "1969-12-31 23:59:58.75", "2024-02-29 23:59:59.999999",
    "2000-01-01 00:00:00", "1999-12-31 12:00:00.5",
]  # fmt: skip


def test_the_seconds_of_extract_and_date_part_keep_their_fraction(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for field in ("second", "millisecond", "microsecond"):
        columns = []
        for text in INTERVALS:
            columns += [f"extract({field} FROM INTERVAL '{text}')"]
            columns += [f"date_part('{field}', INTERVAL '{text}')"]
        for text in STAMPS:
            columns += [f"extract({field} FROM TIMESTAMP '{text}')"]
            columns += [f"date_part('{field}', TIMESTAMPTZ '{text}+00')"]
        _same(kyma, postgres, "SELECT " + ", ".join(columns))


FACTORS = ["2", "-3", "0.5", "1.5", "0.33", "7", "-2.7", "1e-3"]


@pytest.mark.parametrize("operator", ["*", "/"])
def test_interval_times_and_over_a_number(kyma, postgres, operator: str) -> None:  # type: ignore[no-untyped-def]
    columns = []
    for text, factor in itertools.product(INTERVALS[:-1], FACTORS):
        product = f"(INTERVAL '{text}' {operator} {factor})"
        columns += [f"extract(epoch FROM {product})", f"extract(day FROM {product})"]
        columns += [f"extract(month FROM {product})"]
    _same(kyma, postgres, "SELECT " + ", ".join(columns))
    _same(kyma, postgres, "SELECT TIMESTAMP '2026-01-31 10:00:00' + 3 * INTERVAL '1 month 1 day'")


def test_interval_over_zero_is_division_by_zero(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(psycopg.errors.DivisionByZero):
        postgres.execute("SELECT INTERVAL '1 hour' / 0")
    with pytest.raises(KymaError, match="division by zero"):
        kyma("SELECT INTERVAL '1 hour' / 0")


TIME_TEMPLATES = [
    "YYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD\"T\"HH24:MI:SS.MS", "HH12:MI:SS AM", "hh12 a.m. P.M.",
    "FMMonth DD, YYYY", "Month Mon MONTH MON month mon", "Day Dy DAY DY day dy", "FMDay FMMonth",
    "DDD D ID IW IYYY IYY IY I WW W Q J CC", "US MS FF1 FF2 FF3 FF4 FF5 FF6 SSSS SSSSS",
    "FMDDth DDTH FMMMth Y,YYY YYY YY Y", "RM rm FMRM", "TZ tz OF TZH:TZM", "\"quoted YYYY\" \\\" x",
    "FMHH24:FMMI", "YYYYMMDD",
]  # fmt: skip


def test_to_char_of_timestamps_takes_postgres_templates(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for template in TIME_TEMPLATES:
        escaped = template.replace("'", "''")
        columns = [f"to_char(TIMESTAMP '{s}', '{escaped}')" for s in STAMPS[:4]]
        columns += [f"to_char(TIMESTAMPTZ '{s}+00', '{escaped}')" for s in STAMPS[3:]]
        columns += [f"to_char(DATE '2026-12-{day:02}', '{escaped}')" for day in (1, 21, 22, 23, 31)]
        _same(kyma, postgres, "SELECT " + ", ".join(columns))


NUMBERS = ["0", "1", "-1", "0.5", "-0.5", "1.5", "2.5", "-2.5", "12.345", "0.001", "-0.004"]
NUMBERS += ["999.995", "1234.5", "-1234.567", "99999", "1234567.891", "0.05"]
NUMBER_TEMPLATES = [
    "999D99", "FM999D99", "9990.00", "FM9990.00", "999", "FM999", "0000", "9,999.99",
    "FM9,999,999.99", "9.9", "FM9.9", "0.9", "9", "99G999D9", "FM0.000", "9999.9999",
]  # fmt: skip


def test_to_char_of_numbers_takes_postgres_digit_templates(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for template in NUMBER_TEMPLATES:
        columns = [f"to_char({n}, '{template}')" for n in NUMBERS]
        columns += [f"to_char(CAST({n} AS numeric(12, 3)), '{template}')" for n in NUMBERS[:6]]
        _same(kyma, postgres, "SELECT " + ", ".join(columns))


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT to_char(1.5::float8, '9.9')",  # Postgres rounds the float's binary value
        "SELECT to_char(1.5, 'S9.9')",
        "SELECT to_char(INTERVAL '1 hour', 'HH24')",
        "SELECT to_char(TIMESTAMP '2026-03-04 05:06:07', 'IDDD')",
    ],
)
def test_to_char_refuses_what_it_cannot_write(kyma, postgres, sql: str) -> None:  # type: ignore[no-untyped-def]
    postgres.execute(sql)  # Postgres answers
    with pytest.raises(KymaError, match="not supported"):
        kyma(sql)


def test_result_columns_carry_postgres_names(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    for sql in [
        "SELECT string_agg(x, ',') FROM (VALUES ('a'), ('b')) AS v(x)",
        "SELECT date_trunc('day', TIMESTAMP '2026-03-04 05:06:07')",
        "SELECT date_part('second', TIMESTAMP '2026-03-04 05:06:07'), extract(hour FROM now())",
        "SELECT to_char(now(), 'YYYY'), 1.0 / 3",
        "SELECT sum(x) / count(*) FROM (VALUES (1.5), (2.5)) AS v(x)",
    ]:
        names = [d.name for d in postgres.execute(sql).description or ()]  # type: ignore[call-overload]
        assert kyma(sql)[0] == names, sql


def test_numeric_text_with_more_decimals_than_kept_is_refused(kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    """A plain numeric keeps 10 decimals in kyma: rounding the text would change answers
    (``round('2.4999999999999996'::numeric)`` would be 3, Postgres says 2)."""
    for sql in [
        "SELECT round('2.4999999999999996'::numeric)",
        "SELECT round(CAST(v AS numeric)) FROM (VALUES ('2.4999999999999996')) AS t(v)",
    ]:
        postgres.execute(sql)  # type: ignore[call-overload]
        with pytest.raises(KymaError, match="has more than 10 decimals"):
            kyma(sql)
    _same(kyma, postgres, "SELECT CAST(v AS numeric(5, 2)) FROM (VALUES ('2.4999999999')) AS t(v)")
