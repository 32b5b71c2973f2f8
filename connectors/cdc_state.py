"""CDC sync state: a connector's slot, its worker epoch, and each synced table's cursor.

LSNs are ints here (``pg_lsn`` in the catalog). A table's cursor moves with ``advance_table``,
a payload of the extent commit holding the changes, so both land or neither does. A worker
``claim``s the connector first (the epoch goes up); every move checks the epoch, so a worker
that lost its claim can no longer write, and cursors never go back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from kyma.connectors.store import MIGRATIONS
from kyma.engine.catalog import CatalogDatabase, Payload, Store, Transaction
from kyma.engine.errors import FencedWriterError

CHANGES_SUFFIX = "__changes"
"""``<table>__changes`` reads a CDC table's change log; ``<table>`` its current state."""


@dataclass(frozen=True)
class CdcTable:
    source_table: str
    kyma_table: str
    primary_key: tuple[str, ...]
    phase: str
    cursor_lsn: int | None
    rows_snapshotted: int
    changes_applied: int


@dataclass(frozen=True)
class CdcState:
    slot_name: str | None
    consistent_lsn: int | None
    confirmed_lsn: int | None
    epoch: int
    tables: tuple[CdcTable, ...]

    def table(self, source_table: str) -> CdcTable | None:
        return next((t for t in self.tables if t.source_table == source_table), None)


def lsn_text(lsn: int) -> str:
    """``0/16B3748`` form of an LSN.

    >>> lsn_text(0x1_00000010)
    '1/10'
    """
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    """The int of an LSN in ``0/16B3748`` form.

    >>> lsn_int('1/10')
    4294967312
    """
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def _lsn(value: object) -> int | None:
    return None if value is None else lsn_int(str(value))


def read(conn: psycopg.Connection, connector_id: int) -> CdcState:
    row = conn.execute(
        "SELECT slot_name, consistent_lsn::text, confirmed_lsn::text, epoch"
        " FROM kyma.connector_cdc WHERE connector_id = %s",
        (connector_id,),
    ).fetchone()
    tables = conn.execute(
        "SELECT source_table, kyma_table, primary_key, phase, cursor_lsn::text,"
        " rows_snapshotted, changes_applied FROM kyma.connector_cdc_tables"
        " WHERE connector_id = %s ORDER BY source_table",
        (connector_id,),
    ).fetchall()
    found = tuple(CdcTable(s, k, tuple(pk), p, _lsn(c), r, a) for s, k, pk, p, c, r, a in tables)
    if row is None:
        return CdcState(None, None, None, 0, found)
    return CdcState(row[0], _lsn(row[1]), _lsn(row[2]), row[3], found)


def prepare(
    conn: psycopg.Connection,
    connector_id: int,
    slot_name: str,
    tables: Sequence[tuple[str, str, Sequence[str]]],
) -> None:
    """Register the connector and its (source table, kyma table, primary key) rows."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO kyma.connector_cdc (connector_id, slot_name) VALUES (%s, %s)"
            " ON CONFLICT (connector_id) DO NOTHING",
            (connector_id, slot_name),
        )
        for source_table, kyma_table, key in tables:
            conn.execute(
                "INSERT INTO kyma.connector_cdc_tables"
                " (connector_id, source_table, kyma_table, primary_key) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (connector_id, source_table) DO NOTHING",
                (connector_id, source_table, kyma_table, list(key)),
            )


def claim(conn: psycopg.Connection, connector_id: int) -> int:
    """Bump the connector's worker epoch; the new epoch fences every older worker."""
    row = conn.execute(
        "UPDATE kyma.connector_cdc SET epoch = epoch + 1, updated_at = now()"
        " WHERE connector_id = %s RETURNING epoch",
        (connector_id,),
    ).fetchone()
    if row is None:
        raise FencedWriterError(f"connector {connector_id}: no CDC state to claim")
    return int(row[0])


def _check_epoch(cur: Transaction, connector_id: int, epoch: int) -> None:
    row = cur.execute(
        "SELECT epoch FROM kyma.connector_cdc WHERE connector_id = %s FOR SHARE",
        (connector_id,),
    ).fetchone()
    if row is None or row[0] != epoch:
        raise FencedWriterError(
            f"connector {connector_id}: CDC worker epoch {epoch} was superseded by"
            f" {None if row is None else row[0]}; another worker owns the connector"
        )


def advance_table(
    connector_id: int,
    source_table: str,
    epoch: int,
    cursor_lsn: int,
    *,
    rows_snapshotted: int = 0,
    changes: int = 0,
) -> Payload:
    """A commit payload: the table's cursor moves to ``cursor_lsn`` and its phase becomes
    ``streaming``. FencedWriterError (aborting the commit) for an old epoch or a move back."""

    def payload(cur: Transaction, _snapshot_id: int) -> None:
        _check_epoch(cur, connector_id, epoch)
        row = cur.execute(
            "UPDATE kyma.connector_cdc_tables SET cursor_lsn = %s::pg_lsn, phase = 'streaming',"
            " rows_snapshotted = rows_snapshotted + %s, changes_applied = changes_applied + %s,"
            " updated_at = now()"
            " WHERE connector_id = %s AND source_table = %s"
            " AND (cursor_lsn IS NULL OR cursor_lsn <= %s::pg_lsn) RETURNING 1",
            (
                lsn_text(cursor_lsn),
                rows_snapshotted,
                changes,
                connector_id,
                source_table,
                lsn_text(cursor_lsn),
            ),
        ).fetchone()
        if row is None:
            raise FencedWriterError(
                f"connector {connector_id} table {source_table!r}: cursor"
                f" {lsn_text(cursor_lsn)} is behind the stored one; cursors never go back"
            )

    return payload


def set_slot(
    conn: psycopg.Connection, connector_id: int, epoch: int, consistent_lsn: int | None
) -> None:
    """Record a newly created slot's consistent point (also the first confirmed LSN)."""
    with conn.transaction(), conn.cursor() as cur:
        _check_epoch(cur, connector_id, epoch)
        lsn = None if consistent_lsn is None else lsn_text(consistent_lsn)
        cur.execute(
            "UPDATE kyma.connector_cdc SET consistent_lsn = %s::pg_lsn,"
            " confirmed_lsn = %s::pg_lsn, updated_at = now() WHERE connector_id = %s",
            (lsn, lsn, connector_id),
        )


def confirm(conn: psycopg.Connection, connector_id: int, epoch: int, lsn: int) -> None:
    """Every synced table holds every change up to ``lsn``: the slot may move there."""
    with conn.transaction(), conn.cursor() as cur:
        _check_epoch(cur, connector_id, epoch)
        cur.execute(
            "UPDATE kyma.connector_cdc SET confirmed_lsn = greatest(confirmed_lsn, %s::pg_lsn),"
            " updated_at = now() WHERE connector_id = %s",
            (lsn_text(lsn), connector_id),
        )


def reset(conn: psycopg.Connection, connector_id: int) -> None:
    """Forget the slot and every table's cursor and chunks: the next start re-snapshots."""
    with conn.transaction():
        conn.execute(
            "DELETE FROM kyma.connector_cdc_chunks WHERE connector_id = %s", (connector_id,)
        )
        conn.execute(
            "DELETE FROM kyma.connector_cdc_tables WHERE connector_id = %s", (connector_id,)
        )
        conn.execute(
            "UPDATE kyma.connector_cdc SET consistent_lsn = NULL, confirmed_lsn = NULL,"
            " updated_at = now() WHERE connector_id = %s",
            (connector_id,),
        )


# ---------------------------------------------------------------- snapshot chunks


@dataclass(frozen=True)
class Chunk:
    """A range of a source table's pages, read by one Spark task."""

    number: int
    first_page: int
    end_page: int | None  # exclusive; None: to the end of the table
    snapshot_lsn: int | None = None
    rows_read: int = 0
    extents: tuple[dict[str, Any], ...] | None = None  # None while to do
    column_writes: tuple[dict[str, Any], ...] = ()

    @property
    def done(self) -> bool:
        return self.extents is not None


def chunks(conn: psycopg.Connection, connector_id: int, source_table: str) -> list[Chunk]:
    rows = conn.execute(
        "SELECT chunk, first_page, end_page, snapshot_lsn::text, rows_read, extents,"
        " column_writes FROM kyma.connector_cdc_chunks"
        " WHERE connector_id = %s AND source_table = %s ORDER BY chunk",
        (connector_id, source_table),
    ).fetchall()
    return [
        Chunk(
            n, first, end, _lsn(lsn), rows or 0, None if ext is None else tuple(ext), tuple(w or ())
        )
        for n, first, end, lsn, rows, ext, w in rows
    ]


def plan_chunks(
    conn: psycopg.Connection, connector_id: int, source_table: str, planned: Sequence[Chunk]
) -> list[Chunk]:
    """Store ``planned`` unless a plan exists (a resumed snapshot keeps its first plan)."""
    with conn.transaction():
        conn.execute(
            "SELECT 1 FROM kyma.connector_cdc WHERE connector_id = %s FOR UPDATE", (connector_id,)
        )
        existing = chunks(conn, connector_id, source_table)
        if existing:
            return existing
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO kyma.connector_cdc_chunks"
                " (connector_id, source_table, chunk, first_page, end_page)"
                " VALUES (%s, %s, %s, %s, %s)",
                [(connector_id, source_table, c.number, c.first_page, c.end_page) for c in planned],
            )
    return list(planned)


def record_chunk(
    conn: psycopg.Connection, connector_id: int, source_table: str, chunk: Chunk
) -> bool:
    """A task read ``chunk``: keep its extents until the table's commit. False if the plan
    is gone (the table committed meanwhile) or another task recorded the chunk first."""
    row = conn.execute(
        "UPDATE kyma.connector_cdc_chunks SET snapshot_lsn = %s::pg_lsn, rows_read = %s,"
        " extents = %s, column_writes = %s"
        " WHERE connector_id = %s AND source_table = %s AND chunk = %s AND extents IS NULL"
        " RETURNING 1",
        (
            lsn_text(chunk.snapshot_lsn or 0),
            chunk.rows_read,
            Jsonb(list(chunk.extents or ())),
            Jsonb(list(chunk.column_writes)),
            connector_id,
            source_table,
            chunk.number,
        ),
    ).fetchone()
    return row is not None


def forget_chunks(connector_id: int, source_table: str) -> Payload:
    """A commit payload: the table's chunk records go with the commit that holds them."""

    def payload(cur: Transaction, _snapshot_id: int) -> None:
        cur.execute(
            "DELETE FROM kyma.connector_cdc_chunks WHERE connector_id = %s AND source_table = %s",
            (connector_id, source_table),
        )

    return payload


def chunk_objects(conn: psycopg.Connection) -> set[str]:
    """Object paths of extents read by snapshot chunks and not yet committed."""
    rows = conn.execute(
        "SELECT e->>'object_path' FROM kyma.connector_cdc_chunks,"
        " jsonb_array_elements(coalesce(extents, '[]'::jsonb)) AS e"
    ).fetchall()
    return {p for (p,) in rows}


class CdcStore(Store):
    """CDC sync state (slots, epochs, table cursors, snapshot chunks) on the catalog
    database. Chunk extents not yet committed count as referenced for orphan GC."""

    migrations = (MIGRATIONS,)  # the connector rows and the sync state: one folder

    def __init__(self, db: CatalogDatabase) -> None:
        super().__init__(db)
        db.references.append(chunk_objects)

    def state(self, connector_id: int) -> CdcState:
        with self.db.connection() as conn:
            return read(conn, connector_id)

    def prepare(
        self, connector_id: int, slot_name: str, tables: Sequence[tuple[str, str, Sequence[str]]]
    ) -> None:
        with self.db.connection() as conn:
            prepare(conn, connector_id, slot_name, tables)

    def claim(self, connector_id: int) -> int:
        with self.db.connection() as conn:
            return claim(conn, connector_id)

    def set_slot(self, connector_id: int, epoch: int, consistent_lsn: int | None) -> None:
        with self.db.connection() as conn:
            set_slot(conn, connector_id, epoch, consistent_lsn)

    def confirm(self, connector_id: int, epoch: int, lsn: int) -> None:
        with self.db.connection() as conn:
            confirm(conn, connector_id, epoch, lsn)

    def reset(self, connector_id: int) -> None:
        with self.db.connection() as conn:
            reset(conn, connector_id)

    def chunks(self, connector_id: int, source_table: str) -> list[Chunk]:
        with self.db.connection() as conn:
            return chunks(conn, connector_id, source_table)

    def plan_chunks(
        self, connector_id: int, source_table: str, planned: Sequence[Chunk]
    ) -> list[Chunk]:
        with self.db.connection() as conn:
            return plan_chunks(conn, connector_id, source_table, planned)
