"""The one write path: coercion → evolution → idempotency → extents → commit.

Every ingest source calls ``WritePath.ingest_ndjson`` (or a sibling taking Arrow) and
differs only in how it read the bytes and which idempotency key it carries. A request
commits as one snapshot or not at all (appends ready while their table's commit is in
flight share the next one: ``group_commit``); extents written before a failure are deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import (
    Catalog,
    ColumnWrite,
    DeletionVector,
    Payload,
    TableInfo,
    column_stats_record,
    schema_evolution,
)
from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import (
    AlreadyExistsError,
    CatalogUnavailableError,
    CommitConflictError,
    IdempotencyKeyReusedError,
    IngestError,
)
from kyma.engine.format import ExtentWriteResult, SegmentFormat
from kyma.engine.storage import ObjectStore
from kyma.engine.types import Column, KymaType
from kyma.ingest.coerce import Coerced, Lines, check_shape, coerce_ndjson
from kyma.ingest.encode import (
    Encoded,
    EncodeJob,
    column_writes,
    conform,
    discard,
    encode_coerced,
    write_batch,
)
from kyma.ingest.encode_workers import EncodeWorkers, Pending
from kyma.ingest.evolution import EvolutionPlan, plan_evolution
from kyma.ingest.group_commit import GroupCommit, chained
from kyma.ingest.ledger import Ledger
from kyma.ingest.ledger import record as ledger_record
from kyma.ingest.typed import coerce_typed

log = logging.getLogger("kyma.ingest")
MAX_KEY_LENGTH = 255
TYPED_ATTEMPTS = 5
WORKER_MIN_ROWS = 1000
__all__ = ["IngestAck", "WritePath", "column_writes", "conform", "sum_writes"]


@dataclass
class IngestAck:
    table: str
    rows: int
    snapshot_id: int | None
    replayed: bool = False
    new_columns: list[str] = field(default_factory=list)
    dropped_fields: list[str] = field(default_factory=list)
    props_fields: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_idempotency_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise IngestError(
            f"X-Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters, got {len(key)}"
        )
    return key


class WritePath:
    def __init__(
        self,
        catalog: Catalog,
        ledger: Ledger,
        store: ObjectStore,
        fmt: SegmentFormat,
        *,
        idempotency_wait_seconds: float = 30.0,
        max_keys_per_row: int = 10_000,
        max_nesting_depth: int = 100,
        workers: EncodeWorkers | None = None,
    ) -> None:
        """A row with more than ``max_keys_per_row`` keys, or nested deeper than
        ``max_nesting_depth``, is refused before coercion (0: no limit). With ``workers``
        (writing to the same store) NDJSON bodies are coerced and written in them."""
        self.catalog = catalog
        self.ledger = ledger
        self.store = store
        self.format = fmt
        self.idempotency_wait_seconds = idempotency_wait_seconds
        self.max_keys_per_row = max_keys_per_row
        self.max_nesting_depth = max_nesting_depth
        self.workers = workers
        self.commits = GroupCommit(catalog, store)
        self.server_slot = threading.Lock()
        """Held while the server encodes a body itself; a body that finds it held goes to a
        worker (so one stream pays no trip, and concurrent ones use every core)."""

    def warm(self) -> None:
        """Start the worker processes now, in the background (long-running commands do, so
        that their first batch does not wait for them)."""
        if self.workers is not None:
            self.workers.warm()

    def close(self) -> None:
        """Stop the worker processes (a later NDJSON ingest fails with IngestWorkerError)."""
        if self.workers is not None:
            self.workers.close()

    def ingest_ndjson(
        self,
        table: str,
        body: bytes,
        *,
        idempotency_key: str | None = None,
        schema_evolve: bool = True,
        source: str = "rest",
        columns: Mapping[str, pa.Array] | None = None,
        payload: Payload | None = None,
        lines: Lines | None = None,
    ) -> IngestAck:
        """Ingest an NDJSON body (already decompressed) into ``table`` as one snapshot.

        ``columns`` set whole columns of the table from Arrow arrays, one value per line
        (e.g. a Kafka message's topic, partition and offset); ``payload`` runs in the commit
        transaction (e.g. advancing source positions), so both land or neither does.
        ``lines``: the body's lines, if the caller scanned them (the HTTP edge does).
        """
        if idempotency_key is None:  # the hash identifies what a key stands for: none here
            return self._ingest(
                table, body, None, "", schema_evolve, source, columns, payload, lines
            )
        check_idempotency_key(idempotency_key)
        body_hash = hashlib.sha256(body).hexdigest()
        with self.ledger.lock(idempotency_key, self.idempotency_wait_seconds):
            replayed = self._replayed(idempotency_key, body_hash, table)
            if replayed is not None:
                return replayed
            return self._ingest(
                table,
                body,
                idempotency_key,
                body_hash,
                schema_evolve,
                source,
                columns,
                payload,
                lines,
            )

    def ingest_batches(
        self,
        table: str,
        batches: Iterable[pa.RecordBatch],
        *,
        idempotency_key: str | None = None,
        content_hash: str = "",
        source: str,
        payload: Payload | None = None,
        replace: bool = False,
        deletes: Sequence[DeletionVector] = (),
    ) -> IngestAck:
        """Commit Arrow batches of ``table``'s columns as one snapshot, however many there are.

        Batches are matched to the table's columns by name and cast to their types; a missing
        column is null, a null ``_timestamp`` the ingest time, a column the table lacks a
        SchemaError (widen the table first: the schema is re-read when one appears). Each
        batch is written as it arrives, so memory holds one (two with ingest workers: one
        written there while the next is read). ``content_hash`` identifies what
        ``idempotency_key`` stands for: the same key with another hash is refused. With
        ``replace`` the snapshot retires every extent the table had (time travel keeps them);
        with ``deletes`` it marks those rows deleted (an UPDATE's old rows).
        """
        if idempotency_key is None:
            return self._ingest_batches(
                table, batches, None, content_hash, source, payload, replace, deletes
            )
        check_idempotency_key(idempotency_key)
        with self.ledger.lock(idempotency_key, self.idempotency_wait_seconds):
            replayed = self._replayed(idempotency_key, content_hash, table)
            if replayed is not None:
                return replayed
            return self._ingest_batches(
                table, batches, idempotency_key, content_hash, source, payload, replace, deletes
            )

    def _replayed(self, key: str, body_hash: str, table: str) -> IngestAck | None:
        """The first acknowledgement of ``key``, or None if it was never applied."""
        entry = self.ledger.lookup(key)
        if entry is None:
            return None
        if entry.body_hash != body_hash or entry.table_name != table:
            raise IdempotencyKeyReusedError(
                f"idempotency key {key!r} was used for a different request"
                f" (table {entry.table_name!r}, snapshot {entry.ack.get('snapshot_id')})"
            )
        return IngestAck(**{**entry.ack, "replayed": True})

    def _ingest_batches(
        self,
        table: str,
        batches: Iterable[pa.RecordBatch],
        key: str | None,
        content_hash: str,
        source: str,
        extra_payload: Payload | None,
        replace: bool,
        deletes: Sequence[DeletionVector] = (),
    ) -> IngestAck:
        encoded = self._write_batches(table, batches, time.time_ns())
        written = [w for e in encoded for w in e.written]
        stats: dict[str, ColumnWrite] = {}
        for e in encoded:
            _add_writes(stats, e.writes)
        payload = chained(
            [p for p in (extra_payload, column_stats_record(table, [*stats.values()])) if p]
        )
        return self._commit_written(
            table, written, key, content_hash, source, payload, replace, deletes
        )

    def _write_batches(
        self, table: str, batches: Iterable[pa.RecordBatch], ingest_time_ns: int
    ) -> list[Encoded]:
        """Each batch conformed and written, in order: in a worker when there are workers
        (the next batch is read meanwhile; one batch at a time in a worker, so memory holds
        two), else here. A batch of fewer than WORKER_MIN_ROWS rows is written here: its
        trip to a worker costs more than it saves."""
        info = self.catalog.get_table(table)
        done: list[Encoded] = []
        running: deque[Pending[Encoded] | Encoded] = deque()
        try:
            for batch in batches:
                if any(info.column(name) is None for name in batch.schema.names):
                    info = self.catalog.get_table(table)  # the caller may have widened it
                if self.workers is None or batch.num_rows < WORKER_MIN_ROWS:
                    running.append(
                        write_batch(self.store, self.format, batch, info, ingest_time_ns)
                    )
                else:
                    running.append(self.workers.encode_batch(batch, info, ingest_time_ns))
                while len(running) > (1 if self.workers else 0):
                    done.append(_result(running.popleft()))
            while running:
                done.append(_result(running.popleft()))
        except BaseException:
            for job in running:  # still writing: wait, so that their extents go too
                with contextlib.suppress(Exception):  # it failed: it left nothing
                    done.append(_result(job))
            self.discard([w for e in done for w in e.written])
            raise
        return done

    def commit_extents(
        self,
        table: str,
        written: list[ExtentWriteResult],
        *,
        idempotency_key: str,
        content_hash: str,
        source: str,
        payload: Payload | None = None,
        writes: Sequence[ColumnWrite] = (),
    ) -> IngestAck:
        """Commit extents written elsewhere (Spark tasks) as one snapshot, once per key.

        ``writes`` (what the tasks wrote into each column) go to the column statistics. A
        replayed key commits nothing: the extents are deleted and the first ack returned.
        """
        check_idempotency_key(idempotency_key)
        with self.ledger.lock(idempotency_key, self.idempotency_wait_seconds):
            replayed = self._replayed(idempotency_key, content_hash, table)
            if replayed is not None:
                self.discard(written)
                return replayed
            stats = column_stats_record(table, sum_writes(writes)) if writes else None
            return self._commit_written(
                table,
                written,
                idempotency_key,
                content_hash,
                source,
                chained([p for p in (payload, stats) if p]),
            )

    def _commit_written(
        self,
        table: str,
        written: list[ExtentWriteResult],
        key: str | None,
        content_hash: str,
        source: str,
        extra_payload: Payload | None,
        replace: bool = False,
        deletes: Sequence[DeletionVector] = (),
    ) -> IngestAck:
        """One snapshot of ``written``; on failure they are deleted (unless it may have landed)."""
        try:
            crash_point("write.extents_written")
            ack = IngestAck(table=table, rows=sum(w.row_count for w in written), snapshot_id=None)
            payloads = [extra_payload] if extra_payload is not None else []
            if key is not None:
                payloads.append(ledger_record(key, table, content_hash, _ack_with_snapshot(ack)))
            if replace or deletes:
                self.store.sync(w.object_path for w in written)
                removed = [e.extent_id for e in self.catalog.live_extents(table)] if replace else []
                result = self.catalog.commit(
                    table,
                    written,
                    removed,
                    summary={"source": source},
                    payload=chained(payloads),
                    deletes=deletes,
                )
            else:
                result = self.commits.commit(
                    table, written, source=source, payload=chained(payloads)
                )
        except CatalogUnavailableError:
            raise  # the commit may have landed: orphan GC deletes the objects if it did not
        except BaseException:
            self.discard(written)
            raise
        ack.snapshot_id = result.snapshot_id
        return ack

    def _ingest(
        self,
        table: str,
        body: bytes,
        key: str | None,
        body_hash: str,
        evolve: bool,
        source: str,
        columns: Mapping[str, pa.Array] | None = None,
        extra_payload: Payload | None = None,
        lines: Lines | None = None,
    ) -> IngestAck:
        encoded = self._encode(table, body, evolve, time.time_ns(), columns, lines)[1]
        return self._commit_encoded(table, encoded, key, body_hash, source, extra_payload)

    def commit_encoded(
        self, table: str, encoded: Encoded, *, source: str, payload: Payload | None = None
    ) -> IngestAck:
        """Commit what ``write_ndjson`` wrote as one snapshot, with ``payload`` in its
        transaction; on failure the extents are deleted (unless the commit may have landed)."""
        return self._commit_encoded(table, encoded, None, "", source, payload)

    def _commit_encoded(
        self,
        table: str,
        encoded: Encoded,
        key: str | None,
        body_hash: str,
        source: str,
        extra_payload: Payload | None,
    ) -> IngestAck:
        plan, written = encoded.plan, encoded.written
        ack = IngestAck(
            table=table,
            rows=encoded.rows,
            snapshot_id=None,
            new_columns=plan.new_columns,
            dropped_fields=plan.dropped_fields,
            props_fields=plan.props_fields,
        )
        crash_point("write.extents_written")
        try:
            payloads = [extra_payload] if extra_payload is not None else []
            payloads.append(column_stats_record(table, encoded.writes))
            if key is not None:
                payloads.append(ledger_record(key, table, body_hash, _ack_with_snapshot(ack)))
            result = self.commits.commit(table, written, source=source, payload=chained(payloads))
        except CatalogUnavailableError:
            # The commit may have landed before the connection broke: keep the objects;
            # orphan GC deletes them later if no manifest row references them.
            raise
        except BaseException:
            self.discard(written)
            raise
        ack.snapshot_id = result.snapshot_id
        return ack

    def write_ndjson(
        self,
        table: str,
        body: bytes,
        *,
        schema_evolve: bool,
        ingest_time_ns: int,
        columns: Mapping[str, pa.Array] | None = None,
    ) -> Encoded:
        """Coerce ``body`` (evolving the table if allowed) and write it as extents, without
        a commit: the caller commits them with ``commit_extents`` (e.g. a large file's
        chunks as one snapshot) or ``commit_encoded``, or deletes them with ``discard``.
        ``columns`` as for ``ingest_ndjson``."""
        return self._encode(table, body, schema_evolve, ingest_time_ns, columns)[1]

    def _encode(
        self,
        table: str,
        body: bytes,
        evolve: bool,
        ingest_time_ns: int,
        columns: Mapping[str, pa.Array] | None,
        lines: Lines | None = None,
    ) -> tuple[TableInfo, Encoded]:
        """Coerce and write ``body``: here when the server is encoding no other body (a
        worker's trip would only add to it), in a worker when it is and the table keeps its
        schema, else (no workers, or a body that evolves the table) here too."""
        if self.workers is None or self.server_slot.acquire(blocking=False):
            try:
                return self._encode_here(table, body, evolve, ingest_time_ns, columns, lines)
            finally:
                if self.workers is not None:
                    self.server_slot.release()
        assert self.workers is not None
        info = self.catalog.get_table(table)
        job = EncodeJob(
            body,
            info,
            evolve,
            ingest_time_ns,
            columns,
            self.max_keys_per_row,
            self.max_nesting_depth,
        )
        encoded = self.workers.encode(job)
        if encoded is not None:
            return info, encoded
        return self._encode_here(table, body, evolve, ingest_time_ns, columns, lines)

    def _encode_here(
        self,
        table: str,
        body: bytes,
        evolve: bool,
        ingest_time_ns: int,
        columns: Mapping[str, pa.Array] | None,
        lines: Lines | None = None,
    ) -> tuple[TableInfo, Encoded]:
        info, coerced, plan = self.coerce(
            table, body, schema_evolve=evolve, ingest_time_ns=ingest_time_ns, lines=lines
        )
        return info, encode_coerced(self.store, self.format, info, coerced, columns, plan)

    def coerce(
        self,
        table: str,
        body: bytes,
        *,
        schema_evolve: bool,
        ingest_time_ns: int,
        lines: Lines | None = None,
    ) -> tuple[TableInfo, Coerced, EvolutionPlan]:
        """Coerce an NDJSON body to ``table``'s columns, evolving the table if allowed.

        Every row is validated against the widened schema before the catalog is widened,
        so a body that fails changes nothing. The batch has the returned table's columns, its
        dynamic rows that ``parsed`` vouches for without bytes (``coerce_ndjson(deferred=True)``):
        it is for ``encode_coerced``, which hands both to the extent writer. ``lines``: the
        body's lines, if the caller scanned them.
        """
        lines = check_shape(body, self.max_keys_per_row, self.max_nesting_depth, lines)
        info = self.catalog.get_table(table)
        if schema_evolution(info.options) == "typed":
            return self._coerce_typed(info, body, schema_evolve, ingest_time_ns)
        coerced = coerce_ndjson(
            body, info.columns, ingest_time_ns=ingest_time_ns, lines=lines, deferred=True
        )
        plan = plan_evolution(coerced.unknown_keys, info.columns, evolve=schema_evolve)
        if plan.new_columns or plan.props_fields:
            provisional = _widened(info, plan)
            coerced = coerce_ndjson(
                body,
                provisional,
                props_fields=plan.props_fields,
                ingest_time_ns=ingest_time_ns,
                lines=lines,
                deferred=True,
            )
            if plan.new_columns:
                info = self._widen(table, plan)
                if [c.name for c in info.columns] != [c.name for c in provisional]:
                    coerced = coerce_ndjson(
                        body,
                        info.columns,
                        props_fields=plan.props_fields,
                        ingest_time_ns=ingest_time_ns,
                        lines=lines,
                        deferred=True,
                    )
        return info, coerced, plan

    def _coerce_typed(
        self, info: TableInfo, body: bytes, evolve: bool, ingest_time_ns: int
    ) -> tuple[TableInfo, Coerced, EvolutionPlan]:
        """Typed evolution: plan and validate against the current schema, then widen it;
        a concurrent request that widened it first makes the plan start over."""
        for _ in range(TYPED_ATTEMPTS):
            typed = coerce_typed(body, info, evolve=evolve, ingest_time_ns=ingest_time_ns)
            if not typed.new:
                return info, typed.coerced, typed.plan
            columns = [n.column for n in typed.new]
            try:
                widened = self.catalog.add_columns(
                    info.name, columns, if_not_exists=True, origins=typed.origins
                )
            except AlreadyExistsError:
                info = self.catalog.get_table(info.name)
                continue
            expected = [*info.columns, *columns]
            if [c.name for c in widened.columns] == [c.name for c in expected]:
                return widened, typed.coerced, typed.plan
            info = widened
        raise CommitConflictError(
            f"table {info.name!r}: its schema kept changing under typed evolution"
        )

    def _widen(self, table: str, plan: EvolutionPlan) -> TableInfo:
        for name in plan.new_columns:
            self.catalog.add_column(table, Column(name, KymaType("string")), if_not_exists=True)
        return self.catalog.get_table(table)

    def discard(self, written: list[ExtentWriteResult]) -> None:
        """Delete extents no commit references (GC would, later; this is sooner)."""
        discard(self.store, written)


def sum_writes(writes: Iterable[ColumnWrite]) -> list[ColumnWrite]:
    """Writes into the same column added up, one per column."""
    total: dict[str, ColumnWrite] = {}
    _add_writes(total, list(writes))
    return [*total.values()]


def _add_writes(total: dict[str, ColumnWrite], writes: list[ColumnWrite]) -> None:
    for w in writes:
        old = total.get(w.name)
        if old is not None:
            w = ColumnWrite(w.name, old.rows + w.rows, old.nulls + w.nulls, old.types + w.types)
        total[w.name] = w


def _result(job: Pending[Encoded] | Encoded) -> Encoded:
    return job if isinstance(job, Encoded) else job.result()


def _widened(info: TableInfo, plan: EvolutionPlan) -> list[Column]:
    return [*info.columns, *(Column(n, KymaType("string")) for n in plan.new_columns)]


def _ack_with_snapshot(ack: IngestAck) -> Callable[[int], dict[str, Any]]:
    def build(snapshot_id: int) -> dict[str, Any]:
        return {**ack.to_json(), "snapshot_id": snapshot_id, "replayed": False}

    return build
