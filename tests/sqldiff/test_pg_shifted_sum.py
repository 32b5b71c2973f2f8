"""``sum(x + c)`` of an integer column, kyma (over its own tables) against a loopback Postgres:
the sum, its type, and 22003 exactly where some row's ``x + c`` overflows its type (kyma
checks that once per group, ``shifted_sum``). Values near the int2/int4/int8 bounds overflow
for some shifts only; NULLs, empty input, groups and FILTER."""

from __future__ import annotations

import psycopg
import pytest
import sqlglot
from sqlglot import exp

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError
from kyma.engine.query.rewrite import postgres_semantics

I4, I8 = 2**31 - 1, 2**63 - 1
ROWS = [  # g, s (int2), i (int4), b (int8)
    (1, 32767, I4, I8), (1, -32768, -I4 - 1, -I8 - 1), (1, None, None, None),
    (2, 5, 1000, 10**15), (2, -7, None, -3), (3, None, None, None),
    (4, 100, I4 - 5, I8 - 5), (4, -100, -I4 + 5, -I8 + 5),
]  # fmt: skip


@pytest.fixture(scope="module")
def tables(kyma, postgres):  # type: ignore[no-untyped-def]
    for run in (kyma, postgres.execute):
        run("CREATE TABLE n (g int, s smallint, i int, b bigint)")
        run("CREATE TABLE e (g int, s smallint, i int, b bigint)")
    values = ", ".join(str(row).replace("None", "NULL") for row in ROWS)
    for run in (kyma, postgres.execute):
        run(f"INSERT INTO n (g, s, i, b) VALUES {values}")


def _answer(run, sql: str) -> object:  # type: ignore[no-untyped-def]
    """The rows, each value with its Python type (int: bigint, Decimal: numeric), or the
    SQLSTATE of the error."""
    try:
        return [tuple((type(v).__name__, v) for v in row) for row in run(sql)]
    except KymaError as error:
        return status(error, "sqlstate")
    except psycopg.Error as error:
        return error.sqlstate


def _same(kyma, postgres, sql: str) -> object:  # type: ignore[no-untyped-def]
    ours = _answer(lambda q: kyma(q)[1], sql)
    assert ours == _answer(lambda q: postgres.execute(q).fetchall(), sql), sql
    return ours


@pytest.mark.parametrize(
    "term",
    [
        "s + 1", "1 + s", "s - 1", "i + 1", "i + 5", "i - 5", "i + 6", "i - 6", "i - 7", "-6 + i",
        "i + 0", "i - (-6)", "i + 3000000000", "i - 2147483648", "b + 5", "b - 6", "b - 7", "b + 6",
        "5 + b", "s + 2147483647", "s + 2147483000",
    ],
)  # fmt: skip
def test_a_shifted_sum_is_postgres_s_or_its_overflow(tables, kyma, postgres, term) -> None:  # type: ignore[no-untyped-def]
    for where in ("", " WHERE g = 2", " WHERE g = 3"):
        _same(kyma, postgres, f"SELECT sum({term}) FROM n{where}")
    _same(kyma, postgres, f"SELECT g, sum({term}) FROM n GROUP BY g ORDER BY g")
    filtered = f"SELECT g, sum({term}) FILTER (WHERE g > 1) FROM n GROUP BY g ORDER BY g"
    _same(kyma, postgres, filtered)  # on main, 22003 from a row the filter leaves out
    _same(kyma, postgres, f"SELECT sum({term}) FILTER (WHERE g = 2), count(*) FROM n")
    _same(kyma, postgres, f"SELECT sum({term}), sum({term}) + 1 FROM e")


def test_each_overflow_and_fit_differs_only_where_a_row_overflows(tables, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    assert _same(kyma, postgres, "SELECT sum(i + 5) FROM n WHERE g = 4") == [(("int", 10),)]
    assert _same(kyma, postgres, "SELECT sum(i + 6) FROM n WHERE g = 4") == "22003"
    assert _same(kyma, postgres, "SELECT sum(i - 6) FROM n WHERE g = 4") == [(("int", -12),)]
    assert _same(kyma, postgres, "SELECT sum(i - 7) FROM n WHERE g = 4") == "22003"
    assert _same(kyma, postgres, "SELECT sum(i + 1) FROM n WHERE g = 1") == "22003"
    both = _same(kyma, postgres, "SELECT sum(i + 0), sum(s - 0) FROM n WHERE g = 1")
    assert both == [(("int", -1), ("int", -1))]
    assert _same(kyma, postgres, "SELECT sum(b - 6) FROM n WHERE g = 4") == [(("Decimal", -12),)]
    assert _same(kyma, postgres, "SELECT sum(b - 7) FROM n WHERE g = 4") == "22003"


def test_distinct_and_window_sums_are_postgres_s(tables, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    _same(kyma, postgres, "SELECT sum(DISTINCT s + 1), sum(DISTINCT i - 1) FROM n WHERE g = 2")
    _same(
        kyma,
        postgres,
        "SELECT g, s, sum(s + 1) OVER (PARTITION BY g ORDER BY s) FROM n WHERE s IS NOT NULL"
        " ORDER BY g, s",
    )
    _same(  # the same sum, windowed and not
        kyma,
        postgres,
        "SELECT g, s, sum(s + 1) OVER (PARTITION BY g), (SELECT sum(s + 1) FROM n) FROM n"
        " WHERE s IS NOT NULL ORDER BY g, s",
    )


def test_a_shifted_sum_orders_and_filters_groups_and_keeps_its_name(tables, kyma, postgres) -> None:  # type: ignore[no-untyped-def]
    sql = "SELECT g, sum(i - 1) FROM n WHERE g > 1 GROUP BY g HAVING sum(i - 1) > -5"
    sql += " ORDER BY sum(i - 1)"
    assert len(_same(kyma, postgres, sql)) == 2  # type: ignore[arg-type]
    assert kyma("SELECT sum(s + 1), sum(i - 1) AS t FROM n WHERE g > 1")[0] == ["sum", "t"]


def test_the_sum_checks_each_group_not_each_row() -> None:
    stmt = sqlglot.parse_one("SELECT sum(s + 1), sum(s + 2) FROM t", read="postgres")
    rewritten = postgres_semantics.rule(stmt, {"t": {"s": "SMALLINT"}}, federated=False)
    sums = list(rewritten.find_all(exp.Sum))
    assert [total.this.sql() for total in sums] == ["s", "s"]  # no checked cast under a sum
