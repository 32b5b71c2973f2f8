"""The initial snapshot: a slot created over a replication connection exports a snapshot;
each table is read under it and committed once, with its cursor at the slot's consistent
point, in the same catalog transaction as its extents.

The replication connection stays open (idle) until every reader has imported the snapshot:
an exported snapshot lives only as long as the session that exported it.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from kyma.connectors.cdc_state import advance_table as advance_cdc_table
from kyma.connectors.postgres._connector import PostgresConnector
from kyma.connectors.postgres._types import fetch_expression, to_kyma
from kyma.connectors.postgres.cdc._changes import lsn_key
from kyma.connectors.postgres.cdc._slot import ExportedSlot
from kyma.connectors.postgres.cdc._tables import SyncTable
from kyma.engine.catalog import Transaction
from kyma.ingest.write_path import WritePath

T = TypeVar("T")


KEY_TYPES_JOINED_HERE = frozenset({"int2", "int4", "int8", "text", "varchar"})
"""Key types whose Arrow text is their Postgres output text (what pgoutput sends for a key):
a key of only these is joined into ``_kyma_pk`` in Arrow, not by a ``concat_ws`` per row at
the source (about a sixth of the source's CPU for a snapshot keyed by a bigint)."""


def keys_joined_here(table: SyncTable) -> tuple[str, ...]:
    """The key columns when ``snapshot_rows`` joins ``_kyma_pk`` from them; () when the
    snapshot's SELECT builds it at the source."""
    types = {c.name: c.source_type.typname for c in table.source.columns}
    if all(types.get(k) in KEY_TYPES_JOINED_HERE for k in table.primary_key):
        return table.primary_key
    return ()


def select_sql(table: SyncTable, numeric_mode: str, geometry_mode: str | None) -> str:
    """Every column as the connector fetches it, and, unless ``keys_joined_here``,
    ``_kyma_pk`` built at the source from the key columns' output text, joined by ':'."""
    items = [
        fetch_expression(
            exp.column(c.name, quoted=True),
            c.source_type,
            c.name,
            numeric_mode=numeric_mode,
            geometry_mode=geometry_mode,
        ).sql("postgres")
        for c in table.source.columns
    ]
    if not keys_joined_here(table):
        keys = ", ".join(
            exp.to_identifier(k, quoted=True).sql("postgres") for k in table.primary_key
        )
        items.append(f"concat_ws(':', {keys}) AS _kyma_pk")
    source = exp.table_(table.name, db=table.schema, quoted=True).sql("postgres")
    return f"SELECT {', '.join(items)} FROM {source}"


def snapshot_rows(part: pa.Table, lsn: int, event_ns: int, keys: tuple[str, ...] = ()) -> pa.Table:
    """Rows read under a snapshot at ``lsn``, with the system columns of an insert;
    ``_kyma_pk`` joined from ``keys`` (``keys_joined_here``) unless the source sent it."""
    n = part.num_rows
    if keys:
        texts = [part.column(k).cast(pa.string()) for k in keys]
        pk = texts[0] if len(texts) == 1 else pc.binary_join_element_wise(*texts, ":")
        part = part.append_column("_kyma_pk", pk)
    stamp = pa.repeat(pa.scalar(event_ns, pa.timestamp("ns", tz="UTC")), n)
    part = part.append_column("_kyma_op", pa.repeat(pa.scalar("insert"), n))
    part = part.append_column("_kyma_lsn", pa.repeat(pa.scalar(lsn_key(lsn)), n))
    part = part.append_column("_kyma_event_at", stamp)
    return part.append_column("_timestamp", stamp)


def read_table(
    connector: PostgresConnector, table: SyncTable, snapshot_name: str
) -> Iterator[pa.Table]:
    """The table's rows under the exported snapshot, batch by batch, in kyma's types: ADBC
    (``COPY … TO STDOUT (FORMAT binary)`` into Arrow) on a thread that reads up to
    ``PREFETCH`` batches ahead, so the source's read overlaps the caller's writes."""
    return prefetched(lambda: _read(connector, table, snapshot_name), PREFETCH)


PREFETCH = 4


def prefetched(produce: Callable[[], Generator[T, None, None]], depth: int) -> Iterator[T]:
    """``produce()``'s items, made on a thread at most ``depth`` ahead of the consumer; its
    error is raised here. A consumer that stops early closes the producer (on its thread)."""
    items: queue.Queue[Any] = queue.Queue(depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            with contextlib.closing(produce()) as source:
                for item in source:
                    if not put(item):
                        return
            put(_DONE)
        except BaseException as e:  # handed to the consumer, raised there
            put(_Failed(e))

    thread = threading.Thread(target=run, name="kyma-cdc-snapshot-read", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _DONE:
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()


_DONE = object()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


def _read(
    connector: PostgresConnector, table: SyncTable, snapshot_name: str
) -> Generator[pa.Table, None, None]:
    sql = select_sql(
        table, connector.spec.connection.numeric_mode, connector.spec.scope.geometry_mode
    )
    vectors = {c.name: dim for c in table.source.columns if (dim := c.column.type.vector_dim)}
    with connector.guard(sql), connector.pool.connection() as conn, conn.cursor() as cur:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur.execute(f"SET TRANSACTION SNAPSHOT '{snapshot_name}'")
        cur.execute(sql)
        reader = cur.fetch_record_batch()
        for batch in reader:
            if batch.num_rows:
                yield to_kyma(pa.Table.from_batches([batch], reader.schema), vectors=vectors)
        cur.execute("COMMIT")


def snapshot_table(
    connector: PostgresConnector,
    write_path: WritePath,
    connector_id: int,
    epoch: int,
    table: SyncTable,
    exported: ExportedSlot,
    on_rows: Callable[[int], None] = lambda rows: None,
) -> int:
    """Read one table under the exported snapshot and commit it as one kyma snapshot; the
    table's cursor moves to the consistent point in that commit. Returns the rows;
    ``on_rows`` hears how many are read so far."""
    event_ns = time.time_ns()
    rows = 0
    keys = keys_joined_here(table)

    def batches() -> Iterator[pa.RecordBatch]:
        nonlocal rows
        for part in read_table(connector, table, exported.snapshot_name):
            rows += part.num_rows
            on_rows(rows)
            rows_in = snapshot_rows(part, exported.consistent_lsn, event_ns, keys)
            yield from rows_in.to_batches()

    def payload(cur: Transaction, snapshot_id: int) -> None:
        advance_cdc_table(
            connector_id, table.qualified, epoch, exported.consistent_lsn, rows_snapshotted=rows
        )(cur, snapshot_id)

    # A table is snapshotted before it streams anything, or again after a re-enable: either
    # way the snapshot is all it holds (time travel keeps what it replaced).
    write_path.ingest_batches(
        table.kyma_table, batches(), source="cdc", payload=payload, replace=True
    )
    return rows
