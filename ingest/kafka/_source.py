"""Kafka as an ingest source type: topics into a table, exactly once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kyma.engine.errors import NotInstalledError, SqlError
from kyma.ingest.kafka._spec import KafkaSpec, is_client_setting, parse_kafka_spec
from kyma.ingest.kafka._status import source_status
from kyma.ingest.kafka._worker import KafkaWorker, prepare_table
from kyma.ingest.source import Source, SourceWorker

if TYPE_CHECKING:
    from kyma.ingest.sources import SourceRegistry

_KAFKA_KEYS = {"bootstrap_servers", "topics", "group_id"}
_BATCH_KEYS = {"max_rows", "max_latency_ms", "max_bytes", "writers"}
_TOP_KEYS = {"table", "schema_evolve", "metadata_columns", "delivery", "assignment"}


class KafkaSource(Source):
    type_name = "kafka"

    def statement_body(self, body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """Options spelled flat: ``topics = 'a,b'``, batch limits, and client settings with
        underscores (``security_protocol`` is librdkafka's ``security.protocol``)."""
        body = dict(body)
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

    def parse(self, body: Any) -> KafkaSpec:
        return parse_kafka_spec(body)

    def prepare(self, spec: KafkaSpec, sources: SourceRegistry) -> None:
        prepare_table(spec, sources.catalog)

    def worker(self, spec: KafkaSpec, sources: SourceRegistry) -> SourceWorker:
        try:
            import confluent_kafka  # noqa: F401
        except ImportError as e:
            raise NotInstalledError("Kafka sources", "kafka") from e
        return KafkaWorker(spec, sources.catalog, sources.store.positions, sources.write_path)

    def status(
        self, spec: KafkaSpec, sources: SourceRegistry, worker: SourceWorker | None
    ) -> dict[str, Any]:
        return source_status(spec, sources.store.positions, worker)  # type: ignore[arg-type]
