"""Ingest sources that run inside kyma: definitions in the catalog, one worker thread each.

``kyma serve`` runs every source; ``kyma kafka-consume`` runs chosen ones in a process of
their own. Several processes may run the same Kafka source: its consumer group shares the
partitions, and the catalog's epochs keep a worker that lost one from writing it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kyma.engine.catalog import Catalog, SourceRecord
from kyma.engine.errors import ConfigError, KymaError, NotFoundError, NotInstalledError
from kyma.engine.query import QueryResult
from kyma.ingest import source_statements
from kyma.ingest.kafka import KafkaSpec, KafkaWorker, parse_kafka_spec, prepare_table
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.sources")


class _Running:
    def __init__(self, worker: KafkaWorker) -> None:
        self.worker = worker
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"source-{worker.spec.name}", daemon=True
        )

    def _run(self) -> None:
        try:
            self.worker.run(self.stop)
        except Exception as e:  # a source's failure must not take the server down
            self.worker.last_error = f"{type(e).__name__}: {e}"
            log.exception("source %r stopped", self.worker.spec.name)


class SourceRegistry:
    def __init__(self, catalog: Catalog, write_path: WritePath) -> None:
        self.catalog = catalog
        self.write_path = write_path
        self._running: dict[str, _Running] = {}
        self._errors: dict[str, str] = {}  # sources that could not start, and why
        self._lock = threading.Lock()
        self._started = False

    def create(self, body: Any) -> dict[str, Any]:
        """Store a definition (its table is created or widened) and start it if running."""
        kind = body.get("type") if isinstance(body, dict) else None
        if kind != "kafka":
            raise ConfigError(f"type: expected 'kafka', got {kind!r}")
        spec = parse_kafka_spec(body)
        prepare_table(spec, self.catalog)
        record = self.catalog.create_source(spec.name, "kafka", spec.table, spec.to_json())
        if self._started:
            self._start(record)
        return self.describe(spec.name)

    def describe(self, name: str) -> dict[str, Any]:
        record = self.catalog.get_source(name)
        return {"id": record.source_id, **record.definition, "running": name in self._running}

    def list(self) -> list[dict[str, Any]]:
        return [self.describe(r.name) for r in self.catalog.list_sources()]

    def status(self, name: str) -> dict[str, Any]:
        """Per partition: the committed position, the topic's high watermark and the lag.

        Positions are the catalog's (exactly once) or the group's in Kafka (at least once).
        ``state`` is this process's: a source may be running in a ``kafka-consume`` worker.
        """
        record = self.catalog.get_source(name)
        spec = parse_kafka_spec(record.definition)
        running = self._running.get(name)
        partitions = self._positions(spec)
        highs = _high_watermarks(spec, [(p["topic"], p["partition"]) for p in partitions])
        for p in partitions:
            high = highs.get((p["topic"], p["partition"]))
            p["high_watermark"] = high
            p["lag"] = None if high is None else max(0, high - p["position"])
        if running is not None and running.thread.is_alive():
            state = "running"
        else:
            state = "failed" if name in self._errors else "idle"
        return {
            "name": name,
            "delivery": spec.delivery,
            "state": state,
            "last_error": running.worker.last_error if running else self._errors.get(name),
            "committed_batches": running.worker.committed_batches if running else 0,
            "partitions": partitions,
        }

    def _positions(self, spec: KafkaSpec) -> list[dict[str, Any]]:
        if not spec.exactly_once:
            return _group_offsets(spec)
        return [
            {"topic": p.stream, "partition": p.partition, "position": p.position, "epoch": p.epoch}
            for p in self.catalog.source_positions(spec.name)
        ]

    def drop(self, name: str) -> None:
        self.catalog.drop_source(name)
        with self._lock:
            running = self._running.pop(name, None)
        if running is not None:
            running.stop.set()
            running.thread.join(timeout=30)

    def start(self, names: list[str] | None = None) -> None:
        """Run the named sources (every source when None) in background threads.

        An unknown name is a NotFoundError; a source that cannot start (its extra is not
        installed) is logged and shows as failed in its status, and the others start.
        """
        records = self.catalog.list_sources()
        unknown = sorted(set(names or ()) - {r.name for r in records})
        if unknown:
            raise NotFoundError(f"no source named {', '.join(map(repr, unknown))}")
        self._started = True
        for record in records:
            if names is None or record.name in names:
                try:
                    self._start(record)
                except KymaError as e:
                    self._errors[record.name] = str(e)
                    log.error("source %r not started: %s", record.name, e)

    def statement(self, sql: str) -> QueryResult | None:
        """Run a source statement (CREATE/DROP SOURCE, SHOW SOURCES), or None."""
        return source_statements.run(self, sql)

    def close(self) -> None:
        with self._lock:
            running, self._running = list(self._running.values()), {}
        for each in running:
            each.stop.set()
        for each in running:
            each.thread.join(timeout=30)

    def _start(self, record: SourceRecord) -> None:
        try:
            import confluent_kafka  # noqa: F401
        except ImportError as e:
            raise NotInstalledError("Kafka sources", "kafka") from e
        worker = KafkaWorker(parse_kafka_spec(record.definition), self.catalog, self.write_path)
        with self._lock:
            if record.name in self._running:
                return
            self._running[record.name] = running = _Running(worker)
        running.thread.start()
        log.info("source %r started", record.name)


def _group_offsets(spec: KafkaSpec) -> list[dict[str, Any]]:
    """The consumer group's committed offsets in Kafka, for every partition of the topics."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": spec.bootstrap_servers, "group.id": spec.group_id, **spec.client}
    )
    try:
        wanted = []
        for topic in spec.topics:
            metadata = consumer.list_topics(topic, timeout=5).topics.get(topic)
            if metadata is not None and metadata.error is None:
                wanted += [TopicPartition(topic, p) for p in sorted(metadata.partitions)]
        committed = consumer.committed(wanted, timeout=5) if wanted else []
    except KafkaException as e:
        log.warning("source %r: group offsets unavailable: %s", spec.name, e)
        return []
    finally:
        consumer.close()
    return [
        {"topic": tp.topic, "partition": tp.partition, "position": max(tp.offset, 0)}
        for tp in committed
    ]


def _high_watermarks(
    spec: KafkaSpec, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    if not partitions:
        return {}
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap_servers,
            "group.id": f"{spec.group_id}-status",
            **spec.client,
        }
    )
    try:
        highs = {}
        for topic, partition in partitions:
            try:
                _, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=5
                )
                highs[(topic, partition)] = high
            except KafkaException:
                continue
        return highs
    finally:
        consumer.close()
