"""Stored ``real`` (float4) columns, kyma against a loopback Postgres: the same DDL and rows
in both (``real``, ``float4``, ``float(p)``; VALUES, INSERT … SELECT, CREATE TABLE AS), then sums,
averages, extremes, ordering, grouping, comparisons with numeric literals, casts, NaN and
the infinities, and 22003 for a value beyond float4's range. On main ``CREATE TABLE t (x
real)`` made a 64-bit column: ``x * 3`` of 0.1 was ``0.30000000000000004`` (Postgres
``0.30000000447034836``) and ``x = 0.1`` held.
"""

from __future__ import annotations

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

ROWS = [
    "0.1", "0.2", "0.3", "1", "2.5", "-7.25", "1e6", "1234567.9", "123456.7", "16777217",
    "1e-5", "3.4028235e38", "-3.4028235e38", "1.1754944e-38", "1e-45", "0", "-0", "0.1",
    "0.2", "2.5",
]  # fmt: skip
TABLE = (
    "CREATE TABLE r (i bigint, g integer, x real, y float4, z float(10), w float(25),"
    " d double precision)"
)


@pytest.fixture(scope="module")
def both(kyma, postgres):  # type: ignore[no-untyped-def]
    """Table ``r`` in both: each value as text into the real columns, its number into the
    double one; ``i`` numbers the rows, ``g`` groups them in threes."""
    values = ", ".join(
        f"({i}, {i % 3}, '{t}', '{t}', '{t}', '{t}', '{t}')" for i, t in enumerate(ROWS)
    )
    for run in (kyma, postgres.execute):
        run(TABLE)
        run(f"INSERT INTO r VALUES {values}")
        run("CREATE TABLE t (x real)")
        run("INSERT INTO t VALUES (0.1)")
    return kyma, postgres


def _same(both, sql: str) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    assert kyma(sql)[1] == postgres.execute(sql).fetchall(), sql


def test_the_column_is_float4_in_the_catalog(both) -> None:  # type: ignore[no-untyped-def]
    _same(
        both,
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_name = 'r' AND column_name NOT IN ('_timestamp', 'props')"
        " ORDER BY ordinal_position",
    )
    _same(
        both,
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute AS a"
        " JOIN pg_class AS c ON a.attrelid = c.oid WHERE c.relname = 'r' AND attnum > 0"
        " AND attname NOT IN ('_timestamp', 'props') ORDER BY attnum",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT x * 3 FROM t",
        "SELECT count(*) FROM t WHERE x = 0.1",
        "SELECT count(*) FROM t WHERE x = 0.1::real",
        "SELECT (SELECT count(*) FROM t WHERE x < 0.1), (SELECT count(*) FROM t WHERE x > 0.1)",
        "SELECT x::text, (x + 0.2)::text, (x * x)::text, x::float8, (-x)::text FROM t",
    ],
)
def test_a_stored_real_as_postgres(both, sql: str) -> None:  # type: ignore[no-untyped-def]
    _same(both, sql)


@pytest.mark.parametrize(
    "expression",
    [
        "x::text",
        "y::text",
        "z::text",
        "w::text",  # float(25) is double precision
        "d::text",
        "(x * 3)::text",
        "(x / 3::real)::text",
        "(x + y)::text",
        "(x + 1)::text",
        "(x * 1.5)::text",
        "x::float8::text",
        "(x = 0.1)::text",
        "(x > 0.2)::text",
        "(x = y)::text",
        "(x = d)::text",
        "(x < 16777217)::text",
        "abs(x)::text",
    ],
)
def test_each_row_as_postgres(both, expression: str) -> None:  # type: ignore[no-untyped-def]
    real_op_real = "::real" in expression or "+ y" in expression  # may leave float4's range
    inside = "WHERE abs(x) BETWEEN 1e-15 AND 1e15 OR x = 0" if real_op_real else ""
    _same(both, f"SELECT i, {expression} FROM r {inside} ORDER BY i")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT sum(x)::text, avg(x)::text, min(x)::text, max(x)::text, count(x) FROM r"
        " WHERE x BETWEEN -1e7 AND 1e7",
        "SELECT g, sum(x)::text, avg(x)::text, min(x)::text, max(x)::text FROM r"
        " WHERE abs(x) < 1e30 GROUP BY g ORDER BY g",
        "SELECT min(x)::text, max(x)::text FROM r",
        "SELECT x::text AS v, count(*) FROM r GROUP BY x ORDER BY x",
        "SELECT i, x::text AS v FROM r ORDER BY x DESC, i",
        "SELECT count(*) FROM r WHERE x IN (0.1, 0.2, 2.5)",
        "SELECT count(*) FROM r WHERE x IN (0.1::real, 0.2::real, 2.5)",
        "SELECT count(*) FROM r WHERE x IN (0.1, -7.25, 16777217)",
        "SELECT count(*) FROM r WHERE x IN (0.1, 0.2::float8, 2.5)",
        "SELECT count(*) FROM r WHERE x NOT IN (0.1, 1)",
        "SELECT i FROM r WHERE x BETWEEN 0.1 AND 0.3 ORDER BY i",
        "SELECT i FROM r WHERE x > 0.30000001 ORDER BY i",
        "SELECT count(DISTINCT x) FROM r",
    ],
)
def test_aggregates_order_and_filters_as_postgres(both, sql: str) -> None:  # type: ignore[no-untyped-def]
    _same(both, sql)


def test_insert_select_and_create_table_as_keep_float4(both) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    for run in (kyma, postgres.execute):
        run("CREATE TABLE s (x real, d double precision)")
        run("INSERT INTO s SELECT d, x FROM r WHERE i < 10")
        run("INSERT INTO s SELECT 0.1, 0.1")
        run("CREATE TABLE c AS SELECT x, x * 2 AS y FROM r WHERE i < 5")
    _same(both, "SELECT x::text AS a, d::text AS b, (x = d)::text FROM s ORDER BY x, d")
    _same(
        both,
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_name IN ('s', 'c') AND column_name NOT IN ('_timestamp', 'props')"
        " ORDER BY table_name, ordinal_position",
    )
    _same(both, "SELECT x::text AS a, y::text AS b FROM c ORDER BY x")


def test_alter_table_add_column_real(both) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    for run in (kyma, postgres.execute):
        run("CREATE TABLE a (i bigint)")
        run("ALTER TABLE a ADD COLUMN v real")
        run("INSERT INTO a VALUES (1, 0.1)")
    _same(both, "SELECT (v * 3)::text FROM a")
    _same(
        both,
        "SELECT data_type FROM information_schema.columns"
        " WHERE table_name = 'a' AND column_name = 'v'",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO e VALUES (1e40)",
        "INSERT INTO e VALUES ('1e40')",
        "INSERT INTO e VALUES (-1e39)",
        "INSERT INTO e VALUES (1e-46)",
        "INSERT INTO e VALUES ('-1e-50')",
        "INSERT INTO e SELECT 1e39::float8",
        "INSERT INTO e SELECT d FROM r WHERE d > 0 UNION ALL SELECT 1e300::float8",
        "INSERT INTO e SELECT 1e-300::float8",
    ],
)
def test_beyond_float4_range_is_22003(both, sql: str) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    for run in (kyma, postgres.execute):
        run("CREATE TABLE IF NOT EXISTS e (x real)")
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        postgres.execute(sql)
    with pytest.raises(KymaError) as refused:
        kyma(sql)
    assert status(refused.value, "sqlstate") == "22003"
    _same(both, "SELECT count(*) FROM e")


def test_nan_and_the_infinities(both) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    for run in (kyma, postgres.execute):
        run("CREATE TABLE n (i bigint, x real)")
        run("INSERT INTO n VALUES (1, 'NaN'), (2, 'Infinity'), (3, '-Infinity'), (4, 0.1)")
        run("INSERT INTO n SELECT 5, 'NaN'::float8 UNION ALL SELECT 6, '-Infinity'::float8")
    _same(both, "SELECT i, x::text AS v, (x * 3)::text FROM n ORDER BY x, i")
    _same(both, "SELECT min(x)::text, max(x)::text, sum(x)::text, avg(x)::text FROM n")
    _same(both, "SELECT i FROM n WHERE x = 'NaN' OR x = 'Infinity' ORDER BY i")
    _same(both, "SELECT i FROM n WHERE x > 1e38 ORDER BY i")


def test_update_and_delete_of_a_real_column(both) -> None:  # type: ignore[no-untyped-def]
    kyma, postgres = both
    for run in (kyma, postgres.execute):
        run("CREATE TABLE u (i bigint, x real)")
        run("INSERT INTO u VALUES (1, 0.1), (2, 0.2), (3, 2.5), (4, 0.2)")
        run("UPDATE u SET x = x * 3 WHERE i = 1")  # real op integer, stored back as real
        run("UPDATE u SET x = x * 1e38 WHERE i = 3")
        run("DELETE FROM u WHERE x = 0.2")  # no row: compared in double precision
        run("DELETE FROM u WHERE i = 4 AND x = 0.2::real")
    _same(both, "SELECT i, x::text AS v FROM u ORDER BY i")
    with pytest.raises(psycopg.errors.NumericValueOutOfRange):
        postgres.execute("UPDATE u SET x = 1e40 WHERE i = 2")
    with pytest.raises(KymaError) as refused:
        kyma("UPDATE u SET x = 1e40 WHERE i = 2")
    assert status(refused.value, "sqlstate") == "22003"
