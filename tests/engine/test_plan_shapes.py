"""Plans by shape: statements that differ only in comparison literals share one plan, and
answer as Postgres does for every literal — integers across Postgres's integer/bigint
boundary, strings with quotes, backslashes, case and NaN, literals a rewrite or pruning
reads (timestamps, ``>`` bounds: those shapes are planned by their text)."""

from __future__ import annotations

import psycopg
import pytest

from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

ROWS = [
    (1, "a", 10, "2024-01-01T00:00:00Z"),
    (2, "b", 20, "2024-02-01T00:00:00Z"),
    (3, "it's", 2147483647, "2024-03-01T00:00:00Z"),
    (4, "", None, "2024-04-01T00:00:00Z"),
    (5, "NaN", -7, "2024-05-01T00:00:00Z"),
    (6, "a\\b", 0, "2024-06-01T00:00:00Z"),
    (7, "A", 20, "2024-07-01T00:00:00Z"),
    (2147483648, "ünï", 1, "2024-08-01T00:00:00Z"),
    (9223372036854775807, None, 2, "2024-09-01T00:00:00Z"),
]
INTS = ["0", "2", "007", "2147483647", "2147483648", "9223372036854775807", "20"]
TEXTS = ["a", "", "it''s", "NaN", "a\\b", "A", "ünï", "zz", "2", "x"]
SHAPES = [  # (statement with {} for the literal, literals, whether it shares a plan)
    ("SELECT name FROM t WHERE id = {} ORDER BY name", INTS, True),
    ("SELECT id FROM t WHERE name = '{}' ORDER BY id", TEXTS, True),
    ("SELECT count(*) FROM t WHERE id <> {}", INTS, True),
    ("SELECT id, name FROM t WHERE v = {} AND name <> 'b' ORDER BY id", INTS, True),
    ("SELECT id FROM t WHERE (id = {}) OR name = 'a' ORDER BY id", INTS, True),
    ("SELECT id FROM t WHERE id = CAST(({}) AS bigint) ORDER BY id", INTS, True),
    ("SELECT name FROM t WHERE id = (SELECT max(id) FROM t WHERE v < {}) ORDER BY 1", INTS, True),
    ("SELECT id FROM t WHERE id = '{}' ORDER BY id", ["2", "3", "x", ""], True),
    ("SELECT id FROM t WHERE v > {} ORDER BY id", INTS, False),
    (
        "SELECT id FROM t WHERE ts >= '{}' ORDER BY id",
        ["2024-03-01T00:00:00Z", "2024-08-15"],
        False,
    ),
]


@pytest.fixture
def both(services, pg_server_url: str):  # type: ignore[no-untyped-def]
    """Table ``t`` with the same rows in kyma and in a loopback Postgres (the oracle)."""
    services.query.execute("CREATE TABLE t (id long, name string, v int, ts timestamp)")
    values = ", ".join(f"({i}, {_text(n)}, {_null(v)}, TIMESTAMPTZ '{ts}')" for i, n, v, ts in ROWS)
    services.query.execute(f"INSERT INTO t (id, name, v, ts) VALUES {values}")
    with psycopg.connect(pg_server_url, autocommit=True) as pg:
        pg.execute("DROP TABLE IF EXISTS t")
        pg.execute("CREATE TABLE t (id bigint, name text, v integer, ts timestamptz)")
        pg.execute(f"INSERT INTO t (id, name, v, ts) VALUES {values}")
        yield services.query, pg
        pg.execute("DROP TABLE t")


def _text(value: str | None) -> str:
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


def _null(value: int | None) -> str:
    return "NULL" if value is None else str(value)


def _postgres(pg: psycopg.Connection, sql: str) -> list[tuple] | str:  # type: ignore[type-arg]
    try:
        return [tuple(r) for r in pg.execute(sql).fetchall()]
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


def _kyma(engine, sql: str) -> tuple[list[tuple] | str, str | None]:  # type: ignore[no-untyped-def,type-arg]
    try:
        answer = engine.execute(sql)
    except KymaError as e:
        return f"error {status(e, 'sqlstate')}", None
    return [tuple(r.values()) for r in answer.table.to_pylist()], answer.stats.get("plan")


def test_every_literal_answers_as_postgres_and_a_shape_shares_its_plan(both) -> None:
    engine, pg = both
    for template, literals, shared in SHAPES:
        plans = []
        for literal in literals:
            sql = template.format(literal)
            expected = _postgres(pg, sql)
            found, plan = _kyma(engine, sql)
            assert found == expected, sql
            plans.append(plan)
        answered = [p for p in plans if p is not None]
        if shared is True:  # planned once per literal class, the others by the shape
            assert answered.count("shape") >= len(literals) - 3, (template, plans)
        else:  # a literal the plan reads: never another statement's plan
            assert "shape" not in answered, (template, plans)


def test_a_repeated_text_of_a_shape_is_answered_by_its_shape(both) -> None:
    engine, _ = both
    sql = "SELECT name FROM t WHERE id = 2"
    assert _kyma(engine, sql) == ([("b",)], "planned")
    assert _kyma(engine, sql) == ([("b",)], "shape")
    assert _kyma(engine, "SELECT name FROM t WHERE id = 1") == ([("a",)], "shape")


def test_a_new_snapshot_replans_the_shape(both) -> None:
    engine, _ = both
    assert _kyma(engine, "SELECT name FROM t WHERE id = 1") == ([("a",)], "planned")
    engine.execute("INSERT INTO t (id, name) VALUES (1, 'again')")
    found, plan = _kyma(engine, "SELECT name FROM t WHERE id = 1 ORDER BY name")
    assert found == [("a",), ("again",)]
    found, plan = _kyma(engine, "SELECT name FROM t WHERE id = 1")
    assert sorted(found) == [("a",), ("again",)] and plan == "planned"
    assert _kyma(engine, "SELECT name FROM t WHERE id = 2") == ([("b",)], "shape")


def test_a_time_travel_read_of_a_shape_reads_its_own_literal(both) -> None:
    engine, _ = both
    snapshot = engine.catalog.get_table("t").current_snapshot_id
    assert _kyma(engine, "SELECT name FROM t WHERE id = 1")[0] == [("a",)]
    answer = engine.execute("SELECT name FROM t WHERE id = 2", snapshot=snapshot)
    assert answer.table.to_pylist() == [{"name": "b"}]
