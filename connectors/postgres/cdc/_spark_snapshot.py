"""Snapshots of large tables on Spark: page ranges read in parallel under the exported
snapshot, each task writing its own extents, the driver committing them all in one snapshot.

The plan (chunks of ``chunk_bytes`` worth of the table's pages, read with TID range scans)
is stored when the snapshot starts. The task that reads a chunk records its extents, rows
and the LSN of the snapshot it read under in ``kyma.connector_cdc_chunks``: a crashed
snapshot resumes with the chunks that have no record, so at most the chunks in flight (one
per Spark worker) are read again. A resumed chunk is read under a newer snapshot; the
table's cursor is the oldest chunk's LSN, so streaming replays every change after it and
each key's latest version (by ``_kyma_lsn``) is the source's.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pyarrow as pa
from psycopg import sql

from kyma.connectors.base import SparkTarget
from kyma.connectors.cdc_state import CdcStore, Chunk
from kyma.connectors.cdc_state import advance_table as advance_cdc_table
from kyma.connectors.cdc_state import forget_chunks as forget_cdc_chunks
from kyma.connectors.cdc_state import record_chunk as record_cdc_chunk
from kyma.connectors.postgres._connector import PostgresConnector
from kyma.connectors.postgres._types import to_kyma
from kyma.connectors.postgres.cdc._slot import ExportedSlot
from kyma.connectors.postgres.cdc._snapshot import keys_joined_here, select_sql, snapshot_rows
from kyma.connectors.postgres.cdc._tables import SyncTable
from kyma.engine.catalog import Catalog, ColumnWrite, TableInfo, Transaction, column_stats_record
from kyma.engine.errors import KymaError, RetryableError
from kyma.engine.format import ExtentWriteResult, SegmentFormat
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.config import StoreConfig
from kyma.ingest.write_path import column_writes, conform, sum_writes

log = logging.getLogger("kyma.cdc")
OUTPUT_DDL = "chunk int, rows long"
OUTPUT = pa.schema([("chunk", pa.int32()), ("rows", pa.int64())])


@dataclass(frozen=True)
class ChunkJob:
    """What every task needs (it travels pickled to Spark's Python workers)."""

    connector_id: int
    source_table: str
    source_uri: str  # libpq URI for ADBC, with the password
    catalog_url: str
    select: str
    keys: tuple[str, ...]  # _kyma_pk joined from these in the task (keys_joined_here)
    snapshot_name: str
    snapshot_lsn: int
    vectors: dict[str, int]
    info: TableInfo
    store: StoreConfig
    block_rows: int
    extent_format: str
    event_ns: int
    chunks: tuple[Chunk, ...]


def table_bytes(conn: psycopg.Connection, table: SyncTable) -> int:
    """The table's size on disk (heap, TOAST and free space map), as Postgres counts it."""
    (size,) = conn.execute("SELECT pg_table_size(%s::regclass)", (_regclass(table),)).fetchone()  # type: ignore[misc]
    return int(size)


def plan_chunks(
    conn: psycopg.Connection, table: SyncTable, chunk_bytes: int, slots: int = 1
) -> list[Chunk]:
    """The table's pages in ``page_ranges`` of at most about ``chunk_bytes``."""
    pages, page_size = conn.execute(  # type: ignore[misc]
        "SELECT pg_relation_size(%s::regclass) / current_setting('block_size')::bigint,"
        " current_setting('block_size')::bigint",
        (_regclass(table),),
    ).fetchone()
    return page_ranges(int(pages), max(1, chunk_bytes // page_size), slots)


def page_ranges(pages: int, most: int, slots: int) -> list[Chunk]:
    """Ranges of at most about ``most`` pages, of equal size, as many as a multiple of
    ``slots`` (the tasks Spark runs at once), so that no wave of tasks leaves a core idle
    while one reads a remainder; the last runs to the table's end.

    >>> [(c.first_page, c.end_page) for c in page_ranges(1100, 400, 2)]
    [(0, 275), (275, 550), (550, 825), (825, None)]
    >>> [(c.first_page, c.end_page) for c in page_ranges(0, 400, 2)]
    [(0, None)]
    """
    count = math.ceil(max(1, math.ceil(pages / most)) / slots) * slots
    count = max(1, min(count, pages))
    starts = [i * pages // count for i in range(count)]
    ends: list[int | None] = [*starts[1:], None]
    return [Chunk(i, first, end) for i, (first, end) in enumerate(zip(starts, ends, strict=True))]


def snapshot_on_spark(
    target: SparkTarget,
    connector: PostgresConnector,
    catalog: Catalog,
    cdc: CdcStore,
    connector_id: int,
    epoch: int,
    table: SyncTable,
    exported: ExportedSlot,
    *,
    chunk_bytes: int,
    event_ns: int,
) -> int:
    """Read the chunks still to do on Spark, then commit every chunk's extents as one kyma
    snapshot holding the table's cursor. Returns the rows."""
    from kyma.ingest.load import spark_session

    session = spark_session(target.master)
    with psycopg.connect(**connector.libpq_params(), autocommit=True) as conn:
        planned = plan_chunks(conn, table, chunk_bytes, session.sparkContext.defaultParallelism)
    chunks = cdc.plan_chunks(connector_id, table.qualified, planned)
    todo = tuple(c for c in chunks if not c.done)
    if len(todo) < len(chunks):
        log.info(
            "snapshot of %s resumes: %d of %d chunks already read, %d to read",
            table.qualified,
            len(chunks) - len(todo),
            len(chunks),
            len(todo),
        )
    if todo:
        info = catalog.get_table(table.kyma_table)
        job = ChunkJob(
            connector_id=connector_id,
            source_table=table.qualified,
            source_uri=connector.adbc_uri(),
            catalog_url=cdc.db.url,
            select=select_sql(
                table, connector.spec.connection.numeric_mode, connector.spec.scope.geometry_mode
            ),
            keys=keys_joined_here(table),
            snapshot_name=exported.snapshot_name,
            snapshot_lsn=exported.consistent_lsn,
            vectors={c.name: d for c in table.source.columns if (d := c.column.type.vector_dim)},
            info=info,
            store=target.store,
            block_rows=target.block_rows,
            extent_format=target.extent_format,
            event_ns=event_ns,
            chunks=todo,
        )
        tasks = session.range(len(todo), numPartitions=len(todo))
        try:
            tasks.mapInArrow(chunk_runner(job), OUTPUT_DDL).collect()
        except KymaError:  # raised here, not in a task: its class decides
            raise
        except (
            Exception
        ) as e:  # a task or executor failed: what it recorded stays, the rest resumes
            first = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
            raise RetryableError(f"snapshot of {table.qualified} on Spark failed: {first}") from e
    return commit_chunks(catalog, cdc, connector_id, epoch, table)


def commit_chunks(
    catalog: Catalog, cdc: CdcStore, connector_id: int, epoch: int, table: SyncTable
) -> int:
    """One kyma snapshot of every chunk's extents (replacing what the table held), the
    cursor at the oldest chunk's LSN, and the chunk records gone, in one transaction."""
    chunks = cdc.chunks(connector_id, table.qualified)
    unread = [c.number for c in chunks if not c.done]
    if not chunks or unread:
        raise RetryableError(f"snapshot of {table.qualified}: chunks {unread} are not read yet")
    extents = [ExtentWriteResult(**e) for c in chunks for e in c.extents or ()]
    writes = sum_writes(
        ColumnWrite(w["name"], w["rows"], w["nulls"], tuple(w["types"]))
        for c in chunks
        for w in c.column_writes
    )
    rows = sum(c.rows_read for c in chunks)
    cursor = min(c.snapshot_lsn or 0 for c in chunks)
    steps = [
        advance_cdc_table(connector_id, table.qualified, epoch, cursor, rows_snapshotted=rows),
        forget_cdc_chunks(connector_id, table.qualified),
        column_stats_record(table.kyma_table, writes),
    ]

    def payload(cur: Transaction, snapshot_id: int) -> None:
        for step in steps:
            step(cur, snapshot_id)

    removed = [e.extent_id for e in catalog.live_extents(table.kyma_table)]
    catalog.commit(table.kyma_table, extents, removed, summary={"source": "cdc"}, payload=payload)
    return rows


def chunk_runner(job: ChunkJob) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The ``mapInArrow`` function: task numbers in, (chunk, rows) out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        store = job.store.open()
        fmt = segment_format(job.extent_format, job.block_rows)
        for batch in batches:
            for index in batch.column("id").to_pylist():
                chunk = read_chunk(job, job.chunks[index], store, fmt)
                with psycopg.connect(job.catalog_url) as catalog:
                    kept = record_cdc_chunk(catalog, job.connector_id, job.source_table, chunk)
                if not kept:  # another reader recorded it, or the table committed meanwhile
                    for extent in chunk.extents or ():
                        store.delete(extent["object_path"])
                yield pa.record_batch([[chunk.number], [chunk.rows_read]], schema=OUTPUT)

    return run


def read_chunk(job: ChunkJob, chunk: Chunk, store: Any, fmt: SegmentFormat) -> Chunk:
    """Read the chunk's pages under the exported snapshot into (at most) one extent."""
    import adbc_driver_postgresql.dbapi as adbc

    where = f" WHERE ctid >= '({chunk.first_page},0)'::tid" + (
        "" if chunk.end_page is None else f" AND ctid < '({chunk.end_page},0)'::tid"
    )
    rows, writes, extents = 0, [], []
    writer = None
    with adbc.connect(job.source_uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur.execute(f"SET TRANSACTION SNAPSHOT '{job.snapshot_name}'")
        cur.execute(job.select + where)
        reader = cur.fetch_record_batch()
        try:
            for batch in reader:
                if not batch.num_rows:
                    continue
                part = to_kyma(pa.Table.from_batches([batch], reader.schema), vectors=job.vectors)
                part = snapshot_rows(part, job.snapshot_lsn, job.event_ns, job.keys)
                if writer is None:
                    writer = fmt.start_extent(store, job.info.schema, job.info.path_prefix)
                for piece in part.to_batches():
                    conformed = conform(piece, job.info, job.event_ns)
                    writes += column_writes(job.info, conformed, None)
                    writer.append(conformed)
                rows += part.num_rows
            if writer is not None:
                extents.append(dataclasses.asdict(writer.finish()))
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        cur.execute("COMMIT")
    return dataclasses.replace(
        chunk,
        snapshot_lsn=job.snapshot_lsn,
        rows_read=rows,
        extents=tuple(extents),
        column_writes=tuple(dataclasses.asdict(w) for w in sum_writes(writes)),
    )


def _regclass(table: SyncTable) -> str:
    return sql.Identifier(table.schema, table.name).as_string(None)
