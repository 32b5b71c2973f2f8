"""Session statements over HTTP, where each request is one statement with no transaction
block: savepoints answer as Postgres does outside a block (25P01), notifications and the
transaction statements are refused naming the statement (0A000) — never a parser node."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SAVEPOINT a", "SAVEPOINT can only be used in transaction blocks"),
        ("RELEASE SAVEPOINT a", "RELEASE SAVEPOINT can only be used in transaction blocks"),
        ("ROLLBACK TO SAVEPOINT a", "ROLLBACK TO SAVEPOINT can only be used in transaction blocks"),
        ("LISTEN jobs", "LISTEN is not supported: kyma has no asynchronous notifications"),
        ("NOTIFY jobs, 'x'", "NOTIFY is not supported: kyma has no asynchronous notifications"),
        ("UNLISTEN *", "UNLISTEN is not supported: kyma has no asynchronous notifications"),
        ("BEGIN", "BEGIN is not supported here: each statement runs on its own"),
        ("COMMIT", "COMMIT is not supported here"),
        ("ABORT", "ROLLBACK is not supported here"),
    ],
)
def test_session_statements_are_answered_in_words(client, sql: str, message: str) -> None:  # type: ignore[no-untyped-def]
    answer = client.post("/v1/query", json={"sql": sql})
    assert answer.status_code == 400, answer.json
    assert answer.json["message"].startswith(message), answer.json


def test_statement_timeout_in_the_body_is_read_as_postgres_reads_it(client) -> None:  # type: ignore[no-untyped-def]
    assert (
        client.post("/v1/query", json={"sql": "SELECT 1", "statement_timeout": "2min"}).status_code
        == 200
    )
    answer = client.post("/v1/query", json={"sql": "SELECT 1", "statement_timeout": "soon"})
    assert answer.status_code == 400
    assert "statement_timeout" in answer.json["message"]
