"""Ingest sources that run inside kyma: definitions in the catalog, one worker thread each.

Two types: ``kafka`` (topics, exactly once) and ``filedrop`` (a folder or an S3 prefix).
``kyma serve`` runs every source; ``kyma kafka-consume`` runs chosen ones in a process of
their own. Several processes may run the same Kafka source: its consumer group shares the
partitions, and the catalog's epochs keep a worker that lost one from writing it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from kyma.engine.catalog import Catalog
from kyma.engine.errors import ConfigError, KymaError, NotFoundError, NotInstalledError
from kyma.engine.query import QueryResult
from kyma.engine.storage import ObjectStore
from kyma.ingest import filedrop, kafka, source_statements
from kyma.ingest.source_store import SourceRecord, SourceStore
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.sources")
TYPES = ("kafka", "filedrop")

#: Opens the store a file-drop source watches: (path URL, S3 endpoint or None) -> store.
StoreOpener = Callable[[str, str | None], ObjectStore]

Worker = kafka.KafkaWorker | filedrop.FileDropWorker


class _Running:
    def __init__(self, worker: Worker) -> None:
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
    def __init__(
        self,
        catalog: Catalog,
        store: SourceStore,
        write_path: WritePath,
        open_store: StoreOpener,
        bulk_load: filedrop.BulkLoad | None = None,
    ) -> None:
        self.catalog = catalog
        self.store = store
        self.write_path = write_path
        self.open_store = open_store
        self.bulk_load = bulk_load  # Spark loads of large dropped files, when available
        self._running: dict[str, _Running] = {}
        self._errors: dict[str, str] = {}  # sources that could not start, and why
        self._lock = threading.Lock()
        self._started = False

    def create(self, body: Any) -> dict[str, Any]:
        """Store a definition (its table is created or widened) and start it if running."""
        kind = body.get("type") if isinstance(body, dict) else None
        if kind == "kafka":
            spec: Any = kafka.parse_kafka_spec(body)
            kafka.prepare_table(spec, self.catalog)
        elif kind == "filedrop":
            spec = filedrop.parse_filedrop_spec(body)
            try:  # a bad path fails here, not later
                self.open_store(spec.path, spec.s3_endpoint_url)
            except ConfigError as e:
                raise ConfigError(
                    f"path: {e}; a file-drop source watches an existing folder"
                ) from e
            filedrop.prepare_table(spec, self.catalog)
        else:
            raise ConfigError(f"type: expected one of {list(TYPES)}, got {kind!r}")
        record = self.store.create(spec.name, kind, spec.table, spec.to_json())
        if self._started:
            self._start(record)
        return self.describe(spec.name)

    def describe(self, name: str) -> dict[str, Any]:
        record = self.store.get(name)
        return {"id": record.source_id, **record.definition, "running": name in self._running}

    def list(self) -> list[dict[str, Any]]:
        return [self.describe(r.name) for r in self.store.list_all()]

    def status(self, name: str) -> dict[str, Any]:
        """How the source is doing: Kafka partitions with their lag, or files and their fate.

        ``state`` is this process's (a Kafka source may be running in a ``kafka-consume``):
        ``running``; ``degraded`` while it runs but cannot work (broker unreachable, folder
        gone), the cause in ``degraded_reason``; ``failed`` (could not start) or ``idle``.
        """
        record = self.store.get(name)
        running = self._running.get(name)
        degraded = None
        if running is not None and running.thread.is_alive():
            degraded = running.worker.degraded
            state = "degraded" if degraded else "running"
        else:
            state = "failed" if name in self._errors else "idle"
        answer = {
            "name": name,
            "type": record.type,
            "state": state,
            "degraded_reason": degraded,
            "last_error": running.worker.last_error if running else self._errors.get(name),
        }
        if record.type == "kafka":
            worker = running.worker if running else None
            spec = kafka.parse_kafka_spec(record.definition)
            return {**answer, **kafka.source_status(spec, self.store.positions, worker)}
        files = self.store.files.files(name)
        worker = running.worker if running else None
        return {
            **answer,
            "last_scan": getattr(worker, "last_scan", None),
            "files_ingested": sum(f.state == "ingested" for f in files),
            "files_failed": sum(f.state == "failed" for f in files),
            "files": [
                {
                    "key": f.key,
                    "state": f.state,
                    "size": f.size,
                    "rows": f.rows,
                    "snapshot_id": f.snapshot_id,
                    "sha256": f.sha256,
                    "error": f.error,
                }
                for f in files
            ],
        }

    def drop(self, name: str) -> None:
        self.store.drop(name)
        with self._lock:
            running = self._running.pop(name, None)
        if running is not None:
            running.stop.set()
            running.thread.join(timeout=30)

    def start(self, names: list[str] | None = None, types: tuple[str, ...] = TYPES) -> None:
        """Run the named sources (every source of ``types`` when None) in background threads.

        An unknown name is a NotFoundError; a source that cannot start (its extra is not
        installed) is logged and shows as failed in its status, and the others start.
        """
        records = self.store.list_all()
        unknown = sorted(set(names or ()) - {r.name for r in records})
        if unknown:
            raise NotFoundError(f"no source named {', '.join(map(repr, unknown))}")
        wrong = sorted(r.name for r in records if r.name in (names or ()) and r.type not in types)
        if wrong:
            raise ConfigError(f"{', '.join(map(repr, wrong))}: not a {' or '.join(types)} source")
        self._started = True
        for record in records:
            if record.type in types and (names is None or record.name in names):
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
        worker = self._worker(record)
        with self._lock:
            if record.name in self._running:
                return
            self._running[record.name] = running = _Running(worker)
        running.thread.start()
        log.info("source %r started", record.name)

    def _worker(self, record: SourceRecord) -> Worker:
        if record.type == "filedrop":
            spec = filedrop.parse_filedrop_spec(record.definition)
            store = self.open_store(spec.path, spec.s3_endpoint_url)
            return filedrop.FileDropWorker(
                spec, self.catalog, self.store.files, self.write_path, store, self.bulk_load
            )
        try:
            import confluent_kafka  # noqa: F401
        except ImportError as e:
            raise NotInstalledError("Kafka sources", "kafka") from e
        spec = kafka.parse_kafka_spec(record.definition)
        return kafka.KafkaWorker(spec, self.catalog, self.store.positions, self.write_path)
