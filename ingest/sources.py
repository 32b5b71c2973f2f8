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
from kyma.engine.errors import ConfigError, NotInstalledError
from kyma.engine.query import QueryResult
from kyma.ingest import source_statements
from kyma.ingest.kafka import KafkaWorker, parse_kafka_spec, prepare_table
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
        """Per partition: the catalog's position, the topic's high watermark and the lag."""
        record = self.catalog.get_source(name)
        spec = parse_kafka_spec(record.definition)
        running = self._running.get(name)
        positions = self.catalog.source_positions(name)
        highs = _high_watermarks(spec, [(p.stream, p.partition) for p in positions])
        return {
            "name": name,
            "state": "running" if running and running.thread.is_alive() else "stopped",
            "last_error": running.worker.last_error if running else None,
            "committed_batches": running.worker.committed_batches if running else 0,
            "partitions": [
                {
                    "topic": p.stream,
                    "partition": p.partition,
                    "position": p.position,
                    "epoch": p.epoch,
                    "high_watermark": highs.get((p.stream, p.partition)),
                    "lag": None
                    if highs.get((p.stream, p.partition)) is None
                    else max(0, highs[(p.stream, p.partition)] - p.position),
                }
                for p in positions
            ],
        }

    def drop(self, name: str) -> None:
        self.catalog.drop_source(name)
        with self._lock:
            running = self._running.pop(name, None)
        if running is not None:
            running.stop.set()
            running.thread.join(timeout=30)

    def start(self, names: list[str] | None = None) -> None:
        """Run the named sources (every source when None) in background threads."""
        self._started = True
        for record in self.catalog.list_sources():
            if names is None or record.name in names:
                self._start(record)

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


def _high_watermarks(spec: Any, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    if not partitions:
        return {}
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": spec.bootstrap_servers, "group.id": f"{spec.group_id}-status"}
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
