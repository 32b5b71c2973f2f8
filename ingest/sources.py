"""Ingest sources that run inside kyma: definitions in the catalog, one worker thread each.

Two types: ``kafka`` (topics, exactly once) and ``filedrop`` (a folder or an S3 prefix).
``kyma serve`` runs every source; ``kyma kafka-consume`` runs chosen ones in a process of
their own. Several processes may run the same Kafka source: its consumer group shares the
partitions, and the catalog's epochs keep a worker that lost one from writing it.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from kyma.engine.catalog import Catalog
from kyma.engine.errors import ConfigError, KymaError, NotFoundError
from kyma.engine.query import QueryResult
from kyma.engine.storage import ObjectStore
from kyma.ingest import filedrop, source_statements
from kyma.ingest.source import Source, SourceWorker
from kyma.ingest.source_metrics import SourceMetrics
from kyma.ingest.source_store import SourceRecord, SourceStore
from kyma.ingest.source_types import SOURCE_TYPES
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.sources")
TYPES = tuple(SOURCE_TYPES)

#: Opens the store a file-drop source watches: (path URL, S3 endpoint or None) -> store.
StoreOpener = Callable[[str, str | None], ObjectStore]


def source_type(kind: Any) -> Source:
    """The source type named ``kind`` (ConfigError naming the ``type`` field otherwise)."""
    found = SOURCE_TYPES.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ConfigError(f"type: expected one of {list(TYPES)}, got {kind!r}")
    return found


class _Running:
    def __init__(self, worker: SourceWorker) -> None:
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
        source = source_type(body.get("type") if isinstance(body, dict) else None)
        spec = source.parse(body)
        source.prepare(spec, self)
        record = self.store.create(spec.name, source.type_name, spec.table, spec.to_json())
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
        gone), the cause in ``degraded_reason`` and since when in ``degraded_since``;
        ``failed`` (could not start) or ``idle``. Every type reports this process's
        ``rows_total``, ``rows_per_second``, ``lag`` (in ``lag_unit``), ``last_commit_at``,
        ``last_error`` and ``last_error_at`` (Unix seconds).
        """
        record = self.store.get(name)
        running = self._running.get(name)
        worker = running.worker if running else None
        # A source not running here (a ``kafka-consume`` may run it): nothing done here yet.
        health = (worker.metrics if worker else SourceMetrics(lag_unit="")).snapshot()
        if running is not None and running.thread.is_alive():
            state = "degraded" if health["degraded_reason"] else "running"
        else:
            state = "failed" if name in self._errors else "idle"
            health["degraded_reason"] = health["degraded_since"] = None
        answer = {"name": name, "type": record.type, "state": state, **health}
        if worker is None:
            answer["last_error"] = self._errors.get(name)  # why it could not start, if so
        source = source_type(record.type)
        return {**answer, **source.status(source.parse(record.definition), self, worker)}

    def metrics(self) -> builtins.list[tuple[str, str, dict[str, Any]]]:
        """(name, type, metrics snapshot) of every source running in this process."""
        with self._lock:
            running = builtins.list(self._running.values())
        return [
            (r.worker.spec.name, r.worker.spec.to_json()["type"], r.worker.metrics.snapshot())
            for r in running
        ]

    def drop(self, name: str) -> None:
        self.store.drop(name)
        with self._lock:
            running = self._running.pop(name, None)
        if running is not None:
            running.stop.set()
            running.thread.join(timeout=30)

    def start(
        self, names: builtins.list[str] | None = None, types: tuple[str, ...] = TYPES
    ) -> None:
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

    def statement(self, stmt: exp.Expression) -> QueryResult | None:
        """Run a source statement (CREATE/DROP SOURCE, SHOW SOURCES), or None."""
        return source_statements.run(self, stmt)

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

    def _worker(self, record: SourceRecord) -> SourceWorker:
        source = source_type(record.type)
        return source.worker(source.parse(record.definition), self)
