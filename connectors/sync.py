"""Connectors in mode ``sync`` or ``both``: their CDC workers, status, and name resolution.

``pg_prod.public.users`` names the synced kyma table when the connector syncs that table
(``live(pg_prod.public.users)`` still reads the source in mode ``both``; mode ``sync`` has no
live reads). ``kyma serve`` and ``kyma cdc-sync`` call ``start``; a worker runs per connector.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from kyma.connectors.base import SparkTarget, SyncDisabled, SyncWorker
from kyma.connectors.cdc_state import CHANGES_SUFFIX, CdcTable, lsn_text
from kyma.connectors.spec import Mode
from kyma.connectors.store import ConnectorRecord, ConnectorStore
from kyma.engine.catalog import check_identifier
from kyma.engine.errors import KymaError, NotFoundError, SqlError
from kyma.engine.query.federation import is_live

if TYPE_CHECKING:
    from kyma.connectors.registry import ConnectorRegistry
    from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.cdc")


def _mode(record: ConnectorRecord) -> Mode:
    return Mode(record.definition.get("mode", Mode.FEDERATION))


def kyma_table_name(connector: str, schema: str, table: str) -> str:
    """Where a synced table lives in kyma.

    >>> kyma_table_name("pg_prod", "public", "users")
    'pg_prod__public__users'
    """
    return check_identifier("table", f"{connector}__{schema}__{table}")


def _synced(record: ConnectorRecord) -> list[str]:
    return list((record.definition.get("sync") or {}).get("tables", []))


class _Running:
    def __init__(self, worker: SyncWorker) -> None:
        self.worker = worker
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=worker.run, args=(self.stop,), name=f"cdc-{worker.record.name}", daemon=True
        )


class SyncRunner:
    def __init__(self, registry: ConnectorRegistry) -> None:
        self.registry = registry
        self.records = registry.records
        self.cdc = registry.cdc
        self.write_path: WritePath | None = None
        self.query: Callable[[str], pa.Table] | None = None
        self.spark: SparkTarget | None = None
        self._running: dict[int, _Running] = {}
        self._lock = threading.Lock()

    def start(
        self,
        write_path: WritePath,
        query: Callable[[str], pa.Table],
        names: list[str] | None = None,
        *,
        spark: SparkTarget | None = None,
    ) -> list[str]:
        """Run a worker for every sync/both connector (or the named ones); their names.
        With ``spark``, large tables' snapshots run on Spark."""
        self.write_path, self.query, self.spark = write_path, query, spark
        records = [r for r in self.records.list_all() if _mode(r) != Mode.FEDERATION]
        unknown = sorted(set(names or ()) - {r.name for r in records})
        if unknown:
            raise NotFoundError(f"no sync connector named {', '.join(map(repr, unknown))}")
        started = []
        for record in records:
            if (names is None or record.name in names) and not record.disabled_reason:
                self._start(record)
                started.append(record.name)
        return started

    def prepare(self, record: ConnectorRecord) -> None:
        """Check the tables (disabling the connector if one cannot sync), create their kyma
        tables and the publication; start the worker if this process runs workers."""
        try:
            self.registry.connector(record.name).prepare_sync(
                record, self.registry.catalog, self.records, self.cdc
            )
        except SyncDisabled as e:
            self._disable(record, e.reason, str(e))
            return
        if self.write_path is not None:
            self._start(self.records.get(str(record.connector_id)))

    def forget(self, record: ConnectorRecord) -> None:
        """The connector is being dropped: stop its worker, then drop its slot and
        publication at the source (a slot left behind holds the source's WAL forever)."""
        self.stop(record.connector_id)
        try:
            with self.registry.opened(record) as connector:
                connector.release_sync(record.connector_id, publication=True)
        except KymaError as e:
            log.warning("connector %r: %s", record.name, e)

    def reset(self, record: ConnectorRecord) -> None:
        """Before re-enabling a connector disabled for a lost slot or a changed key: drop
        what is left of the slot and forget every cursor, so that its tables re-snapshot."""
        self.stop(record.connector_id)
        with self.registry.opened(record) as connector:
            connector.release_sync(record.connector_id, publication=False)
        self.cdc.reset(record.connector_id)
        log.info("connector %r: CDC state reset; its tables re-snapshot", record.name)

    def stop(self, connector_id: int) -> None:
        with self._lock:
            running = self._running.pop(connector_id, None)
        if running is not None:
            running.stop.set()
            running.thread.join(timeout=30)

    def close(self) -> None:
        with self._lock:
            ids = list(self._running)
        for connector_id in ids:
            self.stop(connector_id)

    def status(self, record: ConnectorRecord) -> dict[str, Any]:
        """The ``sync`` part of a connector's status: phase, tables, rows, lag."""
        if _mode(record) == Mode.FEDERATION:
            return {}
        state = self.cdc.state(record.connector_id)
        phases = {t.phase for t in state.tables}
        phase = (
            "disabled"
            if record.disabled_reason
            else ("snapshot" if "snapshot" in phases or not phases else "streaming")
        )
        running = self._running.get(record.connector_id)
        lag_bytes = self._lag_bytes(record, state.confirmed_lsn)
        lag_seconds = None
        if lag_bytes == 0:
            lag_seconds = 0.0
        elif running is not None and running.worker.caught_up_at is not None:
            lag_seconds = round(time.time() - running.worker.caught_up_at, 3)
        return {
            "sync": {
                "phase": phase,
                "slot": state.slot_name,
                "confirmed_lsn": None
                if state.confirmed_lsn is None
                else lsn_text(state.confirmed_lsn),
                "rows_snapshotted": sum(t.rows_snapshotted for t in state.tables),
                "changes_applied": sum(t.changes_applied for t in state.tables),
                "lag_bytes": lag_bytes,
                "lag_seconds": lag_seconds,
                "tables": [
                    {
                        "source": t.source_table,
                        "kyma_table": t.kyma_table,
                        "primary_key": list(t.primary_key),
                        "phase": t.phase,
                        "cursor_lsn": None if t.cursor_lsn is None else lsn_text(t.cursor_lsn),
                        "rows_snapshotted": t.rows_snapshotted,
                        "changes_applied": t.changes_applied,
                        **self._chunks(record.connector_id, t),
                    }
                    for t in state.tables
                ],
                **(running.worker.status() if running is not None else {"worker": None}),
            }
        }

    def _chunks(self, connector_id: int, table: CdcTable) -> dict[str, Any]:
        """A Spark snapshot's progress: its chunks read so far (kept until it commits)."""
        if table.phase != "snapshot":
            return {}
        chunks = self.cdc.chunks(connector_id, table.source_table)
        if not chunks:
            return {}
        done = [c for c in chunks if c.done]
        rows = sum(c.rows_read for c in done)
        return {"snapshot_chunks": {"done": len(done), "total": len(chunks), "rows_read": rows}}

    def _lag_bytes(self, record: ConnectorRecord, confirmed: int | None) -> int | None:
        """Bytes of WAL the source wrote past what kyma holds (None if it cannot tell)."""
        if confirmed is None or record.disabled_reason:
            return None
        try:
            return self.registry.connector(record.name).sync_lag_bytes(confirmed)
        except KymaError:
            return None

    def _start(self, record: ConnectorRecord) -> None:
        assert self.write_path is not None and self.query is not None
        with self._lock:
            existing = self._running.get(record.connector_id)
            if existing is not None and existing.thread.is_alive():
                return
            worker = self.registry.connector(record.name).sync_worker(
                record,
                self.registry.catalog,
                self.records,
                self.cdc,
                self.write_path,
                self.query,
                on_disabled=lambda reason, detail: self._disable(record, reason, detail),
                spark=self.spark,
            )
            self._running[record.connector_id] = running = _Running(worker)
        running.thread.start()
        log.info("connector %r: CDC sync started", record.name)

    def _disable(self, record: ConnectorRecord, reason: str, detail: str) -> None:
        log.error("connector %r disabled: %s", record.name, detail)
        self.records.set_state(record.connector_id, disabled_reason=reason, last_error=detail)


def resolve_synced(connectors: ConnectorStore, stmt: exp.Expression) -> exp.Expression:
    """Rename ``<connector>.<schema>.<table>[__changes]`` to the kyma table a sync connector
    keeps; refuse ``live(...)`` on a sync-only connector and unsynced tables of one."""
    records: dict[str, ConnectorRecord | None] = {}

    def record(name: str) -> ConnectorRecord | None:
        if name not in records:
            try:
                records[name] = connectors.get(name)
            except NotFoundError:
                records[name] = None
        return records[name]

    for table in list(stmt.find_all(exp.Table)):
        if is_live(table):
            args = table.this.expressions
            inner = args[0] if len(args) == 1 else None
            if isinstance(inner, exp.Column) and inner.args.get("db"):
                found = record(inner.args["db"].name)
                if found is not None and _mode(found) == Mode.SYNC:
                    raise SqlError(
                        f"{table.this.sql('postgres')}: connector {found.name!r} has mode"
                        " 'sync', which reads the synced tables only (live() needs 'both')"
                    )
            continue
        if not table.args.get("catalog"):
            continue
        found = record(table.catalog)
        if found is None or _mode(found) == Mode.FEDERATION:
            continue
        base = table.name.removesuffix(CHANGES_SUFFIX)
        suffix = table.name[len(base) :]
        if f"{table.db}.{base}" in _synced(found):
            renamed = exp.Table(
                this=exp.to_identifier(kyma_table_name(found.name, table.db, base) + suffix)
            )
            renamed.set("alias", exp.TableAlias(this=exp.to_identifier(table.alias or table.name)))
            table.replace(renamed)
        elif _mode(found) == Mode.SYNC:
            raise NotFoundError(
                f"table {found.name}.{table.db}.{table.name} is not synced (connector"
                f" {found.name!r} has mode 'sync' and syncs {_synced(found)})"
            )
    return stmt
