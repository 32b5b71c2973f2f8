"""Catalog relations are tables the engine resolves from the parsed statement: a name in a
comment or a string does nothing, a kyma table of a catalog name is that table, a catalog
relation joins a kyma table, and a table-limited caller sees only its tables."""

from __future__ import annotations

import pytest
from http_helpers import post_lines, sql

from kyma.auth import Principal
from kyma.engine.errors import NotFoundError, SqlError


@pytest.fixture
def tables(client):  # type: ignore[no-untyped-def]
    sql(client, "CREATE TABLE events (n long, msg string)")
    sql(client, "CREATE TABLE other (id long)")
    post_lines(client, "events", [{"n": 1, "msg": "a"}, {"n": 2, "msg": "b"}])
    return client


def test_a_catalog_name_in_a_comment_or_string_names_nothing(tables) -> None:  # type: ignore[no-untyped-def]
    answer = sql(tables, "SELECT n FROM events ORDER BY n -- pg_class")
    assert answer["rows"] == [[1], [2]]
    answer = sql(tables, "SELECT n, 'information_schema.tables' AS s FROM events ORDER BY n")
    assert answer["rows"] == [[1, "information_schema.tables"], [2, "information_schema.tables"]]


def test_a_catalog_relation_joins_a_kyma_table(tables) -> None:  # type: ignore[no-untyped-def]
    answer = sql(
        tables,
        "SELECT e.n, c.relname, format_type(a.atttypid, -1) AS t FROM events e"
        " JOIN pg_catalog.pg_class c ON c.relname = 'events'"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'n' ORDER BY e.n",
    )
    assert answer["rows"] == [[1, "events", "bigint"], [2, "events", "bigint"]]


def test_a_kyma_table_of_a_catalog_name_is_the_table(tables) -> None:  # type: ignore[no-untyped-def]
    sql(tables, "CREATE TABLE pg_settings (name string)")
    post_lines(tables, "pg_settings", [{"name": "mine"}])
    assert sql(tables, "SELECT name FROM pg_settings")["rows"] == [["mine"]]
    qualified = "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'TimeZone'"
    assert sql(tables, qualified)["rows"] == [["UTC"]]


def test_a_cte_of_a_catalog_name_is_the_cte(tables) -> None:  # type: ignore[no-untyped-def]
    answer = sql(tables, "WITH pg_class AS (SELECT 7 AS relname) SELECT relname FROM pg_class")
    assert answer["rows"] == [[7]]


def test_unknown_catalog_names_are_precise_errors(tables, services) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFoundError, match='relation "pg_catalog.pg_nothing" does not exist'):
        services.query.execute("SELECT * FROM pg_catalog.pg_nothing")
    with pytest.raises(SqlError, match="information_schema.routines is not available"):
        services.query.execute("SELECT * FROM information_schema.routines")


def test_a_table_limited_caller_sees_only_its_tables(tables, services) -> None:  # type: ignore[no-untyped-def]
    caller = Principal(7, frozenset({"read"}), frozenset({"other"}))

    def rows(statement: str) -> list:
        result = services.query.execute(statement, authorize=caller.authorize)
        return result.table.to_pylist()

    assert rows("SELECT relname FROM pg_class ORDER BY 1") == [{"relname": "other"}]
    listed = rows("SELECT table_name FROM information_schema.columns ORDER BY 1")
    assert {row["table_name"] for row in listed} == {"other"}
    # the same statement text, cached, lists what each caller may read
    everything = services.query.execute("SELECT relname FROM pg_class ORDER BY 1")
    assert everything.table.column("relname").to_pylist() == ["events", "other"]
    assert rows("SELECT relname FROM pg_class ORDER BY 1") == [{"relname": "other"}]
