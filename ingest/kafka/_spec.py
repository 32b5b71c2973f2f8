"""A Kafka source definition: the JSON body of ``POST /v1/sources``, checked field by field."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from kyma.engine.errors import ConfigError
from kyma.ingest.source_spec import no_unknown, source_header

EXACTLY_ONCE = "exactly_once"
AT_LEAST_ONCE = "at_least_once"
DIRECT = "direct"  # the worker takes every partition: a restart reads again at once
GROUP = "group"  # the consumer group splits the partitions between workers
MAX_ROWS = 300_000  # a polled round: its rows ...
MAX_BYTES = 64 << 20  # ... or its messages' bytes, whichever comes first
WRITERS = 2  # batches of different partitions written at once
# librdkafka settings a source may pass through (security, timeouts), never group/offset ones:
# kyma owns where reading starts.
_PASSTHROUGH = re.compile(
    r"(security|sasl|ssl)\.[a-z.]+|(session|socket)\.timeout\.ms|heartbeat\.interval\.ms"
)


@dataclass(frozen=True)
class KafkaSpec:
    name: str
    table: str
    bootstrap_servers: str
    topics: tuple[str, ...]
    group_id: str
    max_rows: int = MAX_ROWS
    max_latency_ms: int = 1_000
    max_bytes: int = MAX_BYTES
    writers: int = WRITERS
    schema_evolve: bool = False
    metadata_columns: bool = True
    delivery: str = EXACTLY_ONCE
    assignment: str = DIRECT
    client: dict[str, str] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return self.delivery == EXACTLY_ONCE

    @property
    def direct(self) -> bool:
        return self.assignment == DIRECT

    def to_json(self) -> dict[str, Any]:
        """The definition as stored and shown (the body's shape, defaults filled in)."""
        plain = asdict(self)
        return {
            "name": self.name,
            "type": "kafka",
            "table": self.table,
            "kafka": {
                "bootstrap_servers": self.bootstrap_servers,
                "topics": list(self.topics),
                "group_id": self.group_id,
                **self.client,
            },
            "batch": {
                "max_rows": self.max_rows,
                "max_latency_ms": self.max_latency_ms,
                "max_bytes": self.max_bytes,
                "writers": self.writers,
            },
            "schema_evolve": plain["schema_evolve"],
            "metadata_columns": plain["metadata_columns"],
            "delivery": self.delivery,
            "assignment": self.assignment,
        }


def is_client_setting(key: str) -> bool:
    """Whether a source may pass ``key`` (librdkafka's dotted name) to its client."""
    return _PASSTHROUGH.fullmatch(key) is not None


def parse_kafka_spec(body: Any) -> KafkaSpec:
    """A KafkaSpec from a JSON body; ConfigError naming the field on any mistake."""
    known = {
        "name",
        "type",
        "table",
        "kafka",
        "batch",
        "schema_evolve",
        "metadata_columns",
        "delivery",
        "assignment",
    }
    name, table = source_header(body, "kafka", known)
    kafka = body.get("kafka")
    if not isinstance(kafka, dict):
        raise ConfigError("kafka: expected an object with bootstrap_servers, topics, group_id")
    servers, topics, group = (kafka.get(k) for k in ("bootstrap_servers", "topics", "group_id"))
    if not isinstance(servers, str) or not servers:
        raise ConfigError(f"kafka.bootstrap_servers: expected 'host:port,…', got {servers!r}")
    if not isinstance(topics, list) or not topics or not all(isinstance(t, str) for t in topics):
        raise ConfigError(f"kafka.topics: expected a non-empty list of topic names, got {topics!r}")
    if not isinstance(group, str) or not group:
        raise ConfigError(f"kafka.group_id: expected a non-empty string, got {group!r}")
    client = {
        k: v for k, v in kafka.items() if k not in ("bootstrap_servers", "topics", "group_id")
    }
    for key, value in client.items():
        if not is_client_setting(key) or not isinstance(value, str | int):
            raise ConfigError(
                f"kafka.{key}: not a setting a source may set (security.*, sasl.*, ssl.*,"
                " session.timeout.ms, socket.timeout.ms, heartbeat.interval.ms)"
            )
    batch = body.get("batch", {})
    if not isinstance(batch, dict):
        raise ConfigError(
            "batch: expected an object with max_rows, max_latency_ms, max_bytes, writers"
        )
    no_unknown(batch, "batch.", {"max_rows", "max_latency_ms", "max_bytes", "writers"})
    delivery = body.get("delivery", EXACTLY_ONCE)
    if delivery not in (EXACTLY_ONCE, AT_LEAST_ONCE):
        raise ConfigError(
            f"delivery: expected {EXACTLY_ONCE!r} or {AT_LEAST_ONCE!r}, got {delivery!r}"
        )
    assignment = body.get("assignment", DIRECT)
    if assignment not in (DIRECT, GROUP):
        raise ConfigError(f"assignment: expected {DIRECT!r} or {GROUP!r}, got {assignment!r}")
    return KafkaSpec(
        name=name,
        table=table,
        bootstrap_servers=servers,
        topics=tuple(topics),
        group_id=group,
        max_rows=_int(batch, "max_rows", MAX_ROWS, 1, 10_000_000),
        max_latency_ms=_int(batch, "max_latency_ms", 1_000, 1, 3_600_000),
        max_bytes=_int(batch, "max_bytes", MAX_BYTES, 1 << 10, 1 << 30),
        writers=_int(batch, "writers", WRITERS, 1, 16),
        schema_evolve=_bool(body, "schema_evolve", False),
        metadata_columns=_bool(body, "metadata_columns", True),
        delivery=delivery,
        assignment=assignment,
        client={k: str(v) for k, v in client.items()},
    )


def _int(raw: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"batch.{key}: expected an integer from {low} to {high}, got {value!r}")
    return value


def _bool(raw: dict[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{key}: expected true or false, got {value!r}")
    return value
