"""Source statements in SQL: CREATE SOURCE, DROP SOURCE and SHOW SOURCES.

``CREATE SOURCE clicks TYPE kafka WITH (table = 'clicks', bootstrap_servers = 'b:9092',
topics = 'clicks,views', group_id = 'kyma-clicks', max_rows = 50000, max_latency_ms = 1000)``
builds the same body ``POST /v1/sources`` takes; so does ``CREATE SOURCE drops TYPE filedrop
WITH (table = 'events', path = 'file:///data/drop', format = 'ndjson', poll_ms = 1000)``.
Kafka client settings are spelled with underscores: ``security_protocol = 'SASL_SSL'`` is
librdkafka's ``security.protocol``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.query.options import name_token, tokenize, with_options
from kyma.ingest.kafka import is_client_setting

if TYPE_CHECKING:
    from kyma.ingest.sources import SourceRegistry

_KAFKA_KEYS = {"bootstrap_servers", "topics", "group_id"}
_BATCH_KEYS = {"max_rows", "max_latency_ms"}
_TOP_KEYS = {"table", "schema_evolve", "metadata_columns", "delivery", "assignment"}


def run(registry: SourceRegistry, sql: str) -> QueryResult | None:
    """Run ``sql`` if it is a source statement; None otherwise."""
    tokens = tokenize(sql)
    if tokens is None:
        return None
    words = [t.text.upper() for t in tokens[:2]]
    if words == ["SHOW", "SOURCES"] and len(tokens) == 2:
        rows = registry.list()
        return QueryResult(
            pa.table(
                {
                    "name": pa.array([r["name"] for r in rows], pa.string()),
                    "type": pa.array([r["type"] for r in rows], pa.string()),
                    "table": pa.array([r["table"] for r in rows], pa.string()),
                    "running": pa.array([r["running"] for r in rows], pa.bool_()),
                }
            ),
            "SHOW SOURCES",
        )
    if len(words) < 2 or words[1] != "SOURCE":
        return None
    if words[0] == "CREATE":
        registry.create(_body(tokens[2:]))
        return QueryResult.status_only("CREATE SOURCE")
    if words[0] == "DROP":
        rest = tokens[2:]
        if_exists = [t.text.upper() for t in rest[:2]] == ["IF", "EXISTS"]
        name = name_token(rest[2:] if if_exists else rest, "DROP SOURCE")
        if not (if_exists and name not in {s["name"] for s in registry.list()}):
            registry.drop(name)
        return QueryResult.status_only("DROP SOURCE")
    return None


def _body(tokens: list[Any]) -> dict[str, Any]:
    if len(tokens) < 3 or tokens[1].text.upper() != "TYPE":
        raise SqlError(
            "expected CREATE SOURCE <name> TYPE kafka|filedrop WITH (<option> = <value>, …)"
        )
    body: dict[str, Any] = {"name": tokens[0].text.lower(), "type": tokens[2].text.lower()}
    options = with_options(tokens[3:], "the source type")
    if body["type"] == "filedrop":
        return {**body, **options}  # the body's fields, as they are
    kafka: dict[str, Any] = {}
    batch: dict[str, Any] = {}
    for key, value in options.items():
        if key == "topics":
            kafka[key] = [t.strip() for t in str(value).split(",") if t.strip()]
        elif key in _KAFKA_KEYS:
            kafka[key] = value
        elif key in _BATCH_KEYS:
            batch[key] = value
        elif key in _TOP_KEYS:
            body[key] = value
        elif is_client_setting(key.replace("_", ".")):
            kafka[key.replace("_", ".")] = value
        else:
            known = sorted(_KAFKA_KEYS | _BATCH_KEYS | _TOP_KEYS | {"topics"})
            raise SqlError(
                f"unknown source option {key!r}; expected one of {known}"
                " or a client setting (security_*, sasl_*, ssl_*, session_timeout_ms, …)"
            )
    body["kafka"] = kafka
    if batch:
        body["batch"] = batch
    return body
