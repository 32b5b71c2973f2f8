"""Table DDL through POST /v1/query."""

from __future__ import annotations

import pytest
from http_helpers import sql


def test_create_describe_alter_show_drop(client) -> None:
    created = sql(
        client,
        "CREATE TABLE logs (service_name string, duration long, embedding vector(3),"
        " attributes dynamic, ok bool, code int, ratio real, share double precision,"
        " seen timestamp)",
    )
    assert created["status"] == "CREATE TABLE"
    described = sql(client, "DESCRIBE logs")
    assert [c["name"] for c in described["columns"]] == [
        "name",
        "type",
        "nullable",
        "default_column",
        "evolved_from",
    ]
    assert described["rows"] == [
        ["_timestamp", "timestamp", True, True, None],
        ["props", "dynamic", True, True, None],
        ["service_name", "string", True, False, None],
        ["duration", "long", True, False, None],
        ["embedding", "vector(3)", True, False, None],
        ["attributes", "dynamic", True, False, None],
        ["ok", "bool", True, False, None],
        ["code", "int", True, False, None],
        ["ratio", "float4", True, False, None],  # Postgres's real: 32 bits
        ["share", "real", True, False, None],  # kyma's real: 64 bits
        ["seen", "timestamp", True, False, None],
    ]
    sql(client, "ALTER TABLE logs ADD COLUMN region string")
    sql(client, "alter table LOGS add column if not exists region string")
    assert sql(client, "DESCRIBE logs")["rows"][-1] == ["region", "string", True, False, None]
    sql(client, "CREATE TABLE IF NOT EXISTS logs (x long)")
    shown = sql(client, "SHOW TABLES")
    assert shown["columns"][0] == {"name": "name", "type": "string"}
    assert shown["rows"] == [["logs", 12, None]]
    sql(client, "DROP TABLE logs")
    assert sql(client, "SHOW TABLES")["rows"] == []
    sql(client, "DROP TABLE IF EXISTS logs")


@pytest.mark.parametrize(
    ("statement", "status", "error", "fragment"),
    [
        ("SELEC 1", 400, "sql_error", "syntax error"),
        ("CREATE TABLE t (x decimal(10, 2))", 400, "schema_error", "unknown type"),
        ("CREATE TABLE t (x vector(0))", 400, "schema_error", "vector(N)"),
        ("CREATE TABLE t (_timestamp long)", 400, "schema_error", "default column"),
        ("DESCRIBE missing", 404, "not_found_error", "'missing' does not exist"),
        ("DROP TABLE missing", 404, "not_found_error", "'missing' does not exist"),
        ("ALTER TABLE missing ADD COLUMN x long", 404, "not_found_error", "does not exist"),
        ("ALTER TABLE t DROP COLUMN x", 400, "unsupported_statement_error", "ADD COLUMN and SET"),
        ("DELETE FROM t RETURNING x", 400, "unsupported_statement_error", "RETURNING"),
        ("REFRESH MATERIALIZED VIEW CONCURRENTLY v", 400, "unsupported_statement_error", "VIEW"),
        ("SHOW COLUMNS", 400, "schema_error", "expected SHOW TABLES"),
        ("SHOW TABLES; SHOW TABLES", 400, "sql_error", "one statement per request"),
        ('CREATE TABLE "x; drop" (a long)', 400, "schema_error", "invalid table name"),
        ("", 400, "sql_error", "empty statement"),
    ],
)
def test_bad_statements_get_a_4xx_naming_the_problem(client, statement, status, error, fragment):
    sql(client, "CREATE TABLE t (x long)")
    answer = sql(client, statement, status)
    assert answer["error"] == error
    assert fragment in answer["message"]
    assert sql(client, "SHOW TABLES")["rows"] == [["t", 3, None]]


def test_duplicate_table_is_a_conflict(client) -> None:
    sql(client, "CREATE TABLE t (x long)")
    answer = sql(client, "CREATE TABLE t (x long)", 409)
    assert answer["error"] == "already_exists_error"


def test_request_body_must_carry_sql(client) -> None:
    answer = client.post("/v1/query", data="not json", content_type="text/plain")
    assert answer.status_code == 400
    assert "expected a JSON body" in answer.get_json()["message"]


def test_health_and_readiness(client) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json()["checks"] == {"catalog": "ok", "object_store": "ok"}
