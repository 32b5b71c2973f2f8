"""Source statements in SQL: CREATE SOURCE, DROP SOURCE and SHOW SOURCES.

``CREATE SOURCE clicks TYPE kafka WITH (table = 'clicks', bootstrap_servers = 'b:9092',
topics = 'clicks,views', group_id = 'kyma-clicks', max_rows = 50000, max_latency_ms = 1000)``
builds the same body ``POST /v1/sources`` takes; so does ``CREATE SOURCE drops TYPE filedrop
WITH (table = 'events', path = 'file:///data/drop', format = 'ndjson', poll_ms = 1000)``.
Kafka client settings are spelled with underscores: ``security_protocol = 'SASL_SSL'`` is
librdkafka's ``security.protocol``. kyma's SQL dialect parses them (``engine/query/dialect``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from kyma.engine.query import QueryResult
from kyma.engine.query.dialect import KymaStatement, statement_options
from kyma.ingest.source_types import SOURCE_TYPES

if TYPE_CHECKING:
    from kyma.ingest.sources import SourceRegistry


def run(registry: SourceRegistry, stmt: exp.Expression) -> QueryResult | None:
    """Run ``stmt`` if it is a source statement; None otherwise."""
    if not isinstance(stmt, KymaStatement) or stmt.noun not in ("SOURCE", "SOURCES"):
        return None
    if stmt.verb == "SHOW":
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
    if stmt.verb == "CREATE":
        registry.create(_body(stmt))
        return QueryResult.status_only("CREATE SOURCE")
    if stmt.verb == "DROP":
        name = stmt.name
        if not (stmt.args.get("exists") and name not in {s["name"] for s in registry.list()}):
            registry.drop(name)
        return QueryResult.status_only("DROP SOURCE")
    return None


def _body(stmt: KymaStatement) -> dict[str, Any]:
    body: dict[str, Any] = {"name": stmt.name, "type": stmt.type_name}
    options = statement_options(stmt)
    source = SOURCE_TYPES.get(body["type"])
    return {**body, **options} if source is None else source.statement_body(body, options)
