"""One connector's CDC sync loop: snapshot what needs it, then stream the slot's changes.

Each step *peeks* at the slot (``pg_logical_slot_peek_binary_changes``, which consumes
nothing; one query returns every pending message), commits each touched table's changes with
its cursor as a payload of the extent commit, records that every table holds the batch
(``confirmed_lsn``), and only then advances the slot (``pg_replication_slot_advance``). A
kill anywhere replays from the slot; transactions at or below a table's cursor are skipped,
so nothing is lost and nothing lands twice. (A START_REPLICATION stream was measured slower
than peek and advance here: one CopyData message per change; see BENCHMARKS.md.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pyarrow as pa

from kyma.connectors.base import SyncDisabled, SyncWorker
from kyma.connectors.cdc_state import CHANGES_SUFFIX, CdcStore, advance_table, lsn_text
from kyma.connectors.postgres._connector import PostgresConnector
from kyma.connectors.postgres.cdc import _slot, _tables
from kyma.connectors.postgres.cdc._columnar import Messages
from kyma.connectors.postgres.cdc._decode import PeekDecoder
from kyma.connectors.postgres.cdc._pace import Pace
from kyma.connectors.postgres.cdc._slot import SlotPosition, create_slot
from kyma.connectors.postgres.cdc._snapshot import snapshot_table
from kyma.connectors.postgres.cdc._spark_snapshot import (
    SparkTarget,
    snapshot_on_spark,
    table_bytes,
)
from kyma.connectors.postgres.cdc._tables import (
    NO_PRIMARY_KEY,
    PK_CHANGED,
    SLOT_MISSING,
    SyncOptions,
    SyncTable,
)
from kyma.connectors.store import ConnectorRecord, ConnectorStore
from kyma.connectors.sync import kyma_table_name
from kyma.engine.catalog import Catalog
from kyma.engine.errors import (
    FencedWriterError,
    RetryableError,
    SourceUnreachableError,
    TerminalError,
    error_code,
)
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.cdc")
Query = Callable[[str], pa.Table]
"""Runs kyma SQL (the worker reads a key's current version for unchanged TOAST values)."""

COMMIT_THREADS = 16
"""Tables of one step committed side by side (each waits mostly on fsyncs: an extent, the
catalog): a thread per table up to this many."""
MAX_BACKOFF = 30.0
IDLE_CONFIRM_SECONDS = 10.0
"""While nothing synced commits, the slot is confirmed up to the WAL's end (and a heartbeat
written) this often, so an idle source or quiet tables hold no WAL back."""


def prepare(
    record: ConnectorRecord,
    connector: PostgresConnector,
    catalog: Catalog,
    records: ConnectorStore,
    cdc: CdcStore,
) -> list[SyncTable]:
    """Check every table to sync (it must have a primary key, the one kyma recorded), create
    its kyma table and the publication, and register them in the CDC state."""
    wanted = _tables.sync_tables(record.definition.get("sync", {}))
    state = cdc.state(record.connector_id)
    tables = []
    with _connect(connector) as conn:
        for schema, name in wanted:
            key = _tables.primary_key(conn, schema, name)
            if not key:
                raise SyncDisabled(NO_PRIMARY_KEY, f"{schema}.{name}")
            known = state.table(f"{schema}.{name}")
            if known is not None and known.primary_key != key:
                raise SyncDisabled(PK_CHANGED, f"{schema}.{name}: {known.primary_key} → {key}")
            source = connector.table(schema, name)
            kyma_table = kyma_table_name(record.name, schema, name)
            tables.append(SyncTable(schema, name, kyma_table, key, source))
        _tables.ensure_publication(conn, _tables.slot_name(record.connector_id), tables)
    for table in tables:
        _tables.ensure_kyma_table(catalog, table)
    synced = tuple(f"{t.qualified}." for t in tables)
    warnings = [w for w in connector.warnings if w.startswith(synced)]
    if warnings:  # the sync goes on; the columns read as dynamic
        _warn(records, record.connector_id, warnings)
    cdc.prepare(
        record.connector_id,
        _tables.slot_name(record.connector_id),
        [(t.qualified, t.kyma_table, t.primary_key) for t in tables],
    )
    return tables


class CdcWorker(SyncWorker):
    def __init__(
        self,
        record: ConnectorRecord,
        connector: PostgresConnector,
        catalog: Catalog,
        records: ConnectorStore,
        cdc: CdcStore,
        write_path: WritePath,
        query: Query,
        *,
        on_disabled: Callable[[str, str], None] = lambda reason, detail: None,
        spark: SparkTarget | None = None,
        batch_bytes: int = 64 * 2**20,
        batch_changes: int = 1_000_000,
        poll_seconds: float = 0.2,
        min_poll_seconds: float = 0.02,
    ) -> None:
        """With ``spark``, large tables' snapshots run there; without it every table is
        read in this process. A step peeks about ``batch_bytes`` of messages (counted from
        the last peek's message size), at most ``batch_changes``. After a step finds
        nothing new, the loop waits ``min_poll_seconds``, doubling up to ``poll_seconds``
        while the source stays quiet."""
        self.record = record
        self.id = record.connector_id
        self.connector = connector
        self.catalog = catalog
        self.records = records
        self.cdc = cdc
        self.write_path = write_path
        self.query = query
        self.on_disabled = on_disabled
        self.batch_bytes = batch_bytes
        self.batch_changes = batch_changes
        self._message_bytes = 100.0  # a message's size in the last peek
        self.poll_seconds = poll_seconds
        self.pace = Pace(min(min_poll_seconds, poll_seconds), poll_seconds)
        self.spark = spark
        self.options = SyncOptions.of(record.definition.get("sync", {}))
        self.slot = _tables.slot_name(self.id)
        self.numeric_mode = connector.spec.connection.numeric_mode
        self.state = "starting"
        self.last_error: str | None = None
        self.caught_up_at: float | None = None
        self.last_commit_at: float | None = None  # when a step last committed changes
        self.changes_per_s: float | None = None  # that step's changes over its duration
        self.snapshot_rows_read: dict[str, int] = {}
        self.epoch = 0
        self._idle_confirmed_at = 0.0
        self.tables: dict[str, SyncTable] = {}
        self.decoder = self._decoder()
        self._conn: psycopg.Connection | None = None
        self._floors: dict[str, int] | None = None  # each table's cursor, once read
        self._read_to: int | None = None  # the WAL end the last complete peek read up to

    # ---------------------------------------------------------------- loop

    def run(self, stop: threading.Event) -> None:
        """Start and stream until ``stop``. The error's class alone decides what follows: a
        RetryableError (or a lost source connection) retries with backoff; a TerminalError
        fails the same way again, so it disables the connector with the error as the reason
        (an operator fixes the cause and enables it again); a FencedWriterError stops."""
        backoff = 0.5
        try:
            while not stop.is_set():
                try:
                    self.start()
                    while not stop.is_set():
                        wait = self.pace.after(self.step())
                        if wait:
                            stop.wait(wait)
                        backoff = 0.5
                except FencedWriterError as e:  # another worker claimed the connector
                    self.state, self.last_error = "fenced", str(e)
                    log.warning("connector %r: CDC worker stops: %s", self.record.name, e)
                    return
                except TerminalError as e:  # SyncDisabled, or e.g. Spark not installed
                    self.state, self.last_error = "disabled", str(e)
                    log.error("connector %r: CDC sync disabled: %s", self.record.name, e)
                    reason = e.reason if isinstance(e, SyncDisabled) else error_code(e)
                    self.on_disabled(reason, str(e))
                    return
                except (RetryableError, psycopg.OperationalError) as e:
                    self.state, self.last_error = "retrying", f"{type(e).__name__}: {e}"
                    log.warning(
                        "connector %r: CDC sync retries in %.1fs: %s", self.record.name, backoff, e
                    )
                    self._close()
                    stop.wait(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
        finally:
            self._close()

    def start(self) -> None:
        """Prepare, claim the connector, and snapshot every table not yet streaming."""
        tables = prepare(self.record, self.connector, self.catalog, self.records, self.cdc)
        self.tables = {t.qualified: t for t in tables}
        self.decoder = self._decoder()  # the source sends every relation again
        self._floors, self._read_to = None, None  # read again once the snapshots commit
        self.epoch = self.cdc.claim(self.id)
        state = self.cdc.state(self.id)
        pending = [t for t in tables if (s := state.table(t.qualified)) and s.phase == "snapshot"]
        if not _slot.exists(self._source(), self.slot):
            if state.confirmed_lsn is not None or len(pending) < len(tables):
                raise SyncDisabled(SLOT_MISSING, self.slot)
            exported = create_slot(self._params(), self.slot, temporary=False)
            self.cdc.set_slot(self.id, self.epoch, exported.consistent_lsn)
        else:
            position = _slot.where(self._source(), self.slot)
            if not pending:
                self.state = "streaming"
                return
            # The slot outlived a snapshot that never committed (or a table was added):
            # a temporary slot exports a newer snapshot; the cursor skips what it holds.
            if state.confirmed_lsn is None:
                self.cdc.set_slot(self.id, self.epoch, position.confirmed)
            exported = create_slot(self._params(), f"{self.slot}_snapshot", temporary=True)
        self.state = "snapshot"
        try:
            for table in pending:
                rows = self._snapshot(table, exported)
                log.info(
                    "connector %r: snapshot of %s: %d rows", self.record.name, table.qualified, rows
                )
        finally:
            exported.close()  # every reader has imported (and finished with) the snapshot
        self.snapshot_rows_read.clear()
        self.state = "streaming"

    def _snapshot(self, table: SyncTable, exported: _slot.ExportedSlot) -> int:
        """One table's snapshot: on Spark when it is large (and a store is configured)."""
        limit = self.options.spark_min_bytes
        if (
            self.spark is not None
            and limit is not None
            and table_bytes(self._source(), table) >= limit
        ):
            return snapshot_on_spark(
                self.spark,
                self.connector,
                self.catalog,
                self.cdc,
                self.id,
                self.epoch,
                table,
                exported,
                chunk_bytes=self.options.chunk_bytes,
                event_ns=time.time_ns(),
            )
        return snapshot_table(
            self.connector,
            self.write_path,
            self.id,
            self.epoch,
            table,
            exported,
            on_rows=lambda rows: self.snapshot_rows_read.__setitem__(table.qualified, rows),
        )

    def step(self) -> int:
        """One peek at the slot, committed; the number of source transactions applied.
        Nothing written at the source since the last peek read everything: no peek."""
        started = time.monotonic()
        floors = self._cursors()
        conn = self._source()
        try:
            position = _slot.where(conn, self.slot)
            if position.wal_end == self._read_to:
                self._quiet(conn, position)
                return 0
            data, lengths, limit = self._peek(conn, position.wal_end, self._limit())
        except psycopg.errors.UndefinedObject as e:
            raise SyncDisabled(SLOT_MISSING, self.slot) from e
        except psycopg.errors.ObjectNotInPrerequisiteState:
            _slot.where(conn, self.slot)  # invalidated in between: SyncDisabled
            raise
        except psycopg.OperationalError as e:
            raise SourceUnreachableError(f"connector {self.record.name!r}: {e}") from e
        complete = len(lengths) < limit  # every commit up to wal_end was read
        if len(lengths):
            self._message_bytes = max(1.0, len(data) / len(lengths))
        txns, batches = self.decoder.decode(conn, Messages.joined(data, lengths), floors)
        if not txns:
            self._read_to = position.wal_end if complete else None
            self._quiet(conn, position)
            return 0
        last = txns[-1].end_lsn
        try:
            self._commit(batches, last)
        except BaseException:
            self._floors = None  # some tables may have committed: read the cursors again
            raise
        for name in batches:
            floors[name] = last
        self._read_to = position.wal_end if complete else None
        target = max(last, position.wal_end) if complete else last
        self.cdc.confirm(self.id, self.epoch, target)
        self._advance_slot(conn, position, target)
        now = time.time()
        if batches:
            changes = sum(count for _, count in batches.values())
            self.last_commit_at = now
            self.changes_per_s = round(changes / max(time.monotonic() - started, 1e-6), 1)
        if complete:
            self.caught_up_at = now
        return len(txns)

    def _cursors(self) -> dict[str, int]:
        """Each table's floor: changes at or below it are in kyma. Read once per start; then
        this worker alone moves them (another one fences it: its next commit fails)."""
        if self._floors is None:
            state = self.cdc.state(self.id)
            confirmed = state.confirmed_lsn or 0
            self._floors = {t.source_table: max(t.cursor_lsn or 0, confirmed) for t in state.tables}
        return self._floors

    def _limit(self) -> int:
        """Messages to peek: about ``batch_bytes`` of them, at most ``batch_changes``. Every
        peek decodes from the slot's restart point, so fewer, larger ones cost the source
        less; the bytes bound what one step holds in memory.

        >>> from types import SimpleNamespace as S
        >>> CdcWorker._limit(S(batch_bytes=64 << 20, batch_changes=10**6, _message_bytes=92))
        729444
        >>> CdcWorker._limit(S(batch_bytes=64 << 20, batch_changes=10**6, _message_bytes=1e6))
        1000
        """
        wanted = int(self.batch_bytes / self._message_bytes)
        return max(min(wanted, self.batch_changes), min(1000, self.batch_changes))

    def _peek(self, conn: psycopg.Connection, upto: int, limit: int) -> tuple[bytes, Any, int]:
        """The pending messages up to ``upto``, at most ``limit`` (more if one transaction
        has more), and the limit: a smaller one if the source cannot hold them in one value."""
        while True:
            try:
                return (*_slot.peek(conn, self.slot, upto, limit), limit)
            except (psycopg.errors.ProgramLimitExceeded, psycopg.errors.OutOfMemory):
                if limit == 1:
                    raise
                limit = max(1, limit // 4)

    def _commit(self, batches: dict[str, tuple[pa.Table, int]], last: int) -> None:
        """Each table's batch with its cursor at ``last``, one catalog commit per table, the
        tables side by side (their extents encode and their commits wait for the catalog
        concurrently); the first error is raised once all are done."""

        def commit(name: str, batch: pa.Table, count: int) -> None:
            payload = advance_table(self.id, name, self.epoch, last, changes=count)
            self.write_path.ingest_batches(
                self.tables[name].kyma_table, batch.to_batches(), source="cdc", payload=payload
            )

        tables = [(name, batch, count) for name, (batch, count) in batches.items()]
        if len(tables) == 1:
            commit(*tables[0])
            return
        threads = min(len(tables), COMMIT_THREADS)
        with ThreadPoolExecutor(threads, thread_name_prefix="kyma-cdc-commit") as pool:
            done = [pool.submit(commit, *table) for table in tables]
        for future in done:
            future.result()

    def _quiet(self, conn: psycopg.Connection, position: SlotPosition) -> None:
        """Nothing synced committed up to the WAL's end: now and then, confirm the slot
        there and write a heartbeat, so the source can recycle its WAL."""
        self.caught_up_at = time.time()
        now = time.monotonic()
        if now - self._idle_confirmed_at < IDLE_CONFIRM_SECONDS:
            return
        self._idle_confirmed_at = now
        if position.wal_end > position.confirmed:
            self.cdc.confirm(self.id, self.epoch, position.wal_end)
            self._advance_slot(conn, position, position.wal_end)
        _slot.heartbeat(conn)

    def status(self) -> dict[str, Any]:
        return {
            "worker": self.state,
            "worker_error": self.last_error,
            "caught_up_at": self.caught_up_at,
            "last_commit_at": self.last_commit_at,
            "changes_per_s": self.changes_per_s,
            **(
                {"snapshot_rows_read": dict(self.snapshot_rows_read)}
                if self.state == "snapshot"
                else {}
            ),
        }

    # ---------------------------------------------------------------- kyma and the source

    def _decoder(self) -> PeekDecoder:
        return PeekDecoder(
            self.tables,
            self.catalog,
            self.numeric_mode,
            self._convert,
            self._lookup,
            self._live_keys,
            self._warn,
        )

    def _warn(self, warnings: list[str]) -> None:
        """New columns of types kyma does not map (they read as dynamic): logged, and added
        to the connector's ``last_error`` (the sync goes on)."""
        log.warning("connector %r: %s", self.record.name, "; ".join(warnings))
        _warn(self.records, self.id, warnings)

    def _convert(self, sql: str, columns: Any) -> pa.Table:
        return self.connector.fetch(sql, columns).table

    def _lookup(
        self, kyma_table: str, keys: Sequence[str], columns: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Each key's current version in kyma: its latest change, unless a tombstone."""
        found: dict[str, dict[str, Any]] = {}
        selected = "".join(f', "{c}"' for c in columns)
        for start in range(0, len(keys), 1000):
            chunk = ", ".join(_literal(k) for k in keys[start : start + 1000])
            answer = self.query(
                f'SELECT "_kyma_pk", "_kyma_lsn", "_kyma_op"{selected}'
                f' FROM "{kyma_table}{CHANGES_SUFFIX}" WHERE "_kyma_pk" IN ({chunk})'
            )
            found.update(_latest(answer.to_pylist()))
        return found

    def _live_keys(self, kyma_table: str) -> set[str]:
        answer = self.query(
            f'SELECT "_kyma_pk", "_kyma_lsn", "_kyma_op" FROM "{kyma_table}{CHANGES_SUFFIX}"'
        )
        return set(_latest(answer.to_pylist()))

    def _advance_slot(self, conn: psycopg.Connection, position: SlotPosition, lsn: int) -> None:
        if lsn > position.confirmed:
            try:
                conn.execute(
                    "SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self.slot, lsn_text(lsn))
                )
            except psycopg.errors.UndefinedObject as e:
                raise SyncDisabled(SLOT_MISSING, self.slot) from e

    def _params(self) -> dict[str, Any]:
        return {**self.connector.libpq_params(), "application_name": "kyma-cdc"}

    def _source(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg.connect(**self._params(), autocommit=True)
            except psycopg.OperationalError as e:
                raise SourceUnreachableError(
                    f"connector {self.record.name!r}: source unreachable: "
                    + self.connector.redact(str(e))
                ) from None
        return self._conn

    def close(self) -> None:
        """Close the worker's source connection (``run`` does on its way out)."""
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None


def _warn(records: ConnectorStore, connector_id: int, warnings: list[str]) -> None:
    """Add ``warnings`` to the connector's ``last_error`` (the sync goes on)."""
    current = records.get(str(connector_id)).last_error or ""
    new = [w for w in warnings if w not in current]
    if new:
        text = "; ".join([current, *new] if current else new)
        records.set_state(connector_id, disabled_reason=None, last_error=text)


def _connect(connector: PostgresConnector) -> psycopg.Connection:
    try:
        return psycopg.connect(**connector.libpq_params(), autocommit=True)
    except psycopg.OperationalError as e:
        raise SourceUnreachableError(
            f"connector {connector.name!r}: source unreachable: {connector.redact(str(e))}"
        ) from None


def _latest(versions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in versions:
        known = latest.get(row["_kyma_pk"])
        if known is None or row["_kyma_lsn"] > known["_kyma_lsn"]:
            latest[row["_kyma_pk"]] = row
    return {key: row for key, row in latest.items() if row["_kyma_op"] != "delete"}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
