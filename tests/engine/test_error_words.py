"""The mistakes a newcomer makes first read in words, with Postgres's SQLSTATE: no parser or
engine class names (sqlglot's, DataFusion's, Arrow's type names), no traceback. Each case is
one of the docs' examples with one mistake (docs/reference/errors.md)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from serve_helpers import free_port

from kyma.engine.catalog import CatalogDatabase
from kyma.engine.error_statuses import status
from kyma.engine.errors import CatalogUnavailableError, KymaError

# Words of the parts underneath that a message must not carry.
_INTERNALS = (
    "Utf8",
    "Int64",
    "Float64",
    "Error during planning",
    "DataFusion",
    "sqlglot",
    "<class",
)


@pytest.fixture
def kyma(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE logs (service_name string, message string, duration long)")
    services.query.execute("CREATE TABLE spans (service_name string)")
    batch = pa.record_batch(
        {
            "service_name": pa.array(["auth"]),
            "message": pa.array(["login timeout"]),
            "duration": pa.array([30], pa.int64()),
        }
    )
    services.write_path.ingest_batches("logs", [batch], source="test")
    return services.query


@pytest.mark.parametrize(
    ("sql", "message", "sqlstate"),
    [
        ("SELECT servce_name FROM logs", 'column "servce_name" does not exist', "42703"),
        ("SELECT x.service_name FROM logs", "column x.service_name does not exist", "42703"),
        (
            "SELECT service_name FROM logs, spans",
            'column reference "service_name" is ambiguous',
            "42702",
        ),
        (
            "SELECT service_name FROM logs a, logs b",
            'column reference "service_name" is ambiguous',
            "42702",
        ),
        (
            "SELECT service_name FROM logs WHERE message = 'x",
            "syntax error at line 1, column 47: unterminated quoted string: a ' is missing",
            "42601",
        ),
        (
            'SELECT "service_name FROM logs',
            'syntax error at line 1, column 8: unterminated quoted identifier: a " is missing',
            "42601",
        ),
        ("SELECT 1 /* a note", "syntax error: unterminated /* comment: a */ is missing", "42601"),
        (
            "SELECT message[1 FROM logs",
            "syntax error at line 1, column 21: expected ']' before 'FROM'",
            "42601",
        ),
        ("SELECT duration + 'a' FROM logs", "operator does not exist: bigint + text", "42883"),
        (
            "SELECT has_token(message) FROM logs",
            "function has_token(text) does not exist",
            "42883",
        ),
        ("SELECT sum(message) FROM logs", "function sum(text) does not exist", "42883"),
        (
            "SELECT service_name, count(*) FROM logs",
            'column "logs.service_name" must appear in the GROUP BY clause or be used in an'
            " aggregate function",
            "42803",
        ),
        (
            "SELECT * FROM logs LIMIT 'ten'",
            "argument of LIMIT must be type bigint, not text",
            "42601",
        ),
        ("SELECT duration FROM logs ORDER BY 2", "position 2 is not in the select list", "42601"),
    ],
)
def test_a_mistake_reads_in_words(kyma, sql: str, message: str, sqlstate: str) -> None:
    with pytest.raises(KymaError) as raised:
        kyma.execute(sql)
    assert str(raised.value) == message
    assert status(raised.value, "sqlstate") == sqlstate
    assert not any(word in str(raised.value) for word in _INTERNALS)


def test_an_unknown_route_names_method_and_path(client) -> None:  # type: ignore[no-untyped-def]
    answer = client.post("/v1/querys", json={"sql": "SELECT 1"})
    assert answer.status_code == 404
    assert answer.json["message"].startswith("no endpoint POST /v1/querys")
    answer = client.get("/v1/query")
    assert answer.status_code == 405
    assert answer.json["message"] == "GET is not allowed on /v1/query: use POST"


def test_an_unreachable_catalog_says_where_and_why() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(CatalogUnavailableError) as raised:
        CatalogDatabase(f"postgresql://kyma:secret@127.0.0.1:{port}/kyma", open_timeout_seconds=1)
    message = str(raised.value)
    assert message.startswith(f"catalog unreachable: no connection to 127.0.0.1:{port}/kyma")
    assert "Connection refused" in message and "secret" not in message
