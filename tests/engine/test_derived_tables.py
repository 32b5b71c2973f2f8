"""Nested derived tables answer like Postgres, aliased or not.

DataFusion 55 dropped one of two consecutive projections that looked alike, so
``SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM t)`` added 1, not 2. kyma aliases every
derived table before DataFusion plans the statement (rewrite/derived_aliases.py).
"""

from __future__ import annotations

import pytest


@pytest.fixture
def numbers(services):
    services.query.execute("CREATE TABLE derived_numbers (n long, s string)")
    services.query.execute("INSERT INTO derived_numbers VALUES (1, 'a'), (5, 'b'), (10, 'c')")
    return services.query


def nested(expression: str, depth: int, table: str = "derived_numbers") -> str:
    sql = f"SELECT n, s FROM {table}"
    for _ in range(depth):
        sql = f"SELECT {expression}, s FROM ({sql})"
    return sql + " ORDER BY s"


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_repeated_projections_each_apply(numbers, depth) -> None:
    answer = numbers.execute(nested("n + 1 AS n", depth)).table
    assert answer.column("n").to_pylist() == [1 + depth, 5 + depth, 10 + depth]
    doubled = numbers.execute(nested("n + n AS n", depth)).table
    assert doubled.column("n").to_pylist() == [n * 2**depth for n in (1, 5, 10)]


def test_literal_rows_and_aggregates_over_nested_projections(numbers) -> None:
    one = "SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM (SELECT n + 1 AS n FROM (SELECT 1 AS n)))"
    assert numbers.execute(one).table.to_pylist() == [{"n": 4}]
    total = numbers.execute(f"SELECT sum(n) AS n FROM ({nested('n * 2 AS n', 2)})").table
    assert total.to_pylist() == [{"n": 64}]


def test_a_user_alias_is_kept(numbers) -> None:
    sql = "SELECT d.n + 1 AS n FROM (SELECT n + 1 AS n FROM derived_numbers) AS d ORDER BY n"
    assert numbers.execute(sql).table.column("n").to_pylist() == [3, 7, 12]
