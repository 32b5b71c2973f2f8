"""The query shapes the corpus found failing, through POST /v1/query, with Postgres's answers
written out (each failed on main: a 500, or a refusal where Postgres answers)."""

from __future__ import annotations

import pytest
from http_helpers import sql


@pytest.fixture
def t(client):
    sql(client, "CREATE TABLE t (a int, b int)")
    sql(client, "INSERT INTO t (a, b) VALUES (1, 2), (6, 7), (NULL, 9), (11, 12)")
    return client


def rows(client, text: str) -> list:  # type: ignore[type-arg]
    return sql(client, text)["rows"]


def test_order_by_position_of_an_unaliased_subquery_is_not_a_500(t) -> None:
    # sqlglot's qualify_columns asserted an alias here: HTTP 500 on main.
    answer = sql(t, "SELECT (SELECT count(*) FROM t AS x WHERE x.b < t.b) FROM t ORDER BY 1")
    assert [c["name"] for c in answer["columns"]] == ["count"]
    assert answer["rows"] == [[0], [1], [2], [3]]


def test_correlated_subqueries_with_other_comparisons(t) -> None:
    assert rows(
        t,
        "SELECT a, (SELECT sum(x.b) FROM t AS x WHERE x.a < t.a AND x.b <> t.b) AS s"
        " FROM t ORDER BY a",
    ) == [[1, None], [6, 2], [11, 9], [None, None]]
    assert rows(t, "SELECT a FROM t WHERE b > (SELECT avg(x.b) FROM t AS x WHERE x.a < t.a)") == [
        [6],
        [11],
    ]


def test_in_and_exists_in_a_select_list(t) -> None:
    assert rows(t, "SELECT 1 IN (SELECT a FROM t), 2 IN (SELECT a FROM t)") == [[True, None]]
    assert rows(t, "SELECT NULL::int IN (SELECT a FROM t WHERE a > 100)") == [[False]]
    assert rows(
        t,
        "SELECT a, a IN (SELECT x.b - 1 FROM t AS x),"
        " EXISTS (SELECT 1 FROM t AS x WHERE x.b < t.a) FROM t ORDER BY a",
    ) == [[1, True, False], [6, True, True], [11, True, True], [None, None, False]]


def test_repeated_and_shadowing_output_names(t) -> None:
    answer = sql(t, "SELECT 52 AS c0, 13 AS c0")
    assert answer["rows"] == [[52, 13]]
    assert [c["name"] for c in answer["columns"]] == ["c0", "c0_2"]
    assert rows(t, "SELECT a, a FROM t WHERE a = 6") == [[6, 6]]
    assert rows(t, "SELECT 33 AS a, a FROM t WHERE b = 2") == [[33, 1]]


def test_star_in_a_one_column_subquery_and_under_group_by(t) -> None:
    sql(t, "CREATE TABLE one (v int)")
    sql(t, "INSERT INTO one (v) VALUES (1), (3)")
    assert rows(t, "SELECT 1 IN (SELECT * FROM one), 2 IN (SELECT * FROM one)") == [[True, False]]
    assert rows(t, "SELECT a FROM t WHERE a = (SELECT * FROM one WHERE v > 1) + 3") == [[6]]
    assert rows(t, "SELECT DISTINCT * FROM t GROUP BY a, b ORDER BY a") == [
        [1, 2],
        [6, 7],
        [11, 12],
        [None, 9],
    ]
    # At the top level, * still holds the default columns first.
    names = [c["name"] for c in sql(t, "SELECT * FROM one")["columns"]]
    assert names == ["_timestamp", "props", "v"]


def test_a_correlated_subquery_it_cannot_plan_is_refused_in_words(t) -> None:
    answer = sql(t, "SELECT (SELECT count(*) FROM t AS x WHERE x.b < t.b OR x.a = t.a) FROM t", 400)
    assert answer["message"].startswith("this correlated subquery (ScalarSubquery)")
