"""The commit: publish extents as a new snapshot by compare-and-swap on the table head.

One transaction reads the head, draws a snapshot id, swaps ``tables.current_snapshot_id``
from the head it read, then inserts the manifest rows, marks removed extents and runs the
caller's payload (ledger row, Kafka offsets, CDC cursor). If another commit moved the head
in between, the swap touches no row: the transaction rolls back and the commit retries on
the new head. Swapping first holds the head row's lock while the costly manifest rows
(their stats and GIN keys) are inserted, so a concurrent commit waits for it rather than
doing that work and throwing it away. Extents being removed must still be live at the new head.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from kyma.engine.catalog._model import CommitResult, DeletionVector
from kyma.engine.catalog._prune import IN_SNAPSHOT
from kyma.engine.catalog.base import Payload
from kyma.engine.errors import CommitConflictError, NotFoundError, StaleCommitError
from kyma.engine.format import ExtentWriteResult

MAX_ATTEMPTS = 200


@dataclass(frozen=True)
class CommitEvent:
    """A landed commit, for listeners (metrics, the console's live tail): ``attempts`` − 1
    lost the CAS race; ``added`` the new extents; ``appends`` whether it only added rows
    (no extent removed or rewritten: not a compaction, DELETE or UPDATE)."""

    table: str
    source: str
    rows: int
    bytes: int
    attempts: int
    seconds: float
    snapshot_id: int = 0
    added: tuple[ExtentWriteResult, ...] = ()
    appends: bool = True


class _HeadMoved(Exception):
    pass


def commit(
    conn: psycopg.Connection,
    table_id: int,
    added: Sequence[ExtentWriteResult],
    removed: Sequence[str],
    summary: dict[str, Any],
    payload: Payload | None,
    deletes: Sequence[DeletionVector] = (),
) -> CommitResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            with conn.transaction():
                snapshot_id, parent_id = _attempt(
                    conn, table_id, added, removed, summary, payload, deletes
                )
            return CommitResult(snapshot_id, parent_id, attempt)
        except (_HeadMoved, psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
            time.sleep(random.uniform(0, min(0.2, 0.002 * 2 ** min(attempt, 7))))
    raise CommitConflictError(
        f"table {table_id}: the head kept moving; gave up after {MAX_ATTEMPTS} attempts"
    )


def truncate(
    conn: psycopg.Connection, table_ids: Sequence[int], summary: dict[str, Any]
) -> list[CommitResult]:
    """One snapshot of each table retiring every extent it holds, all in one transaction
    (TRUNCATE of several tables): each head row is locked before its live extents are read,
    so no commit lands between."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            with conn.transaction():
                results = []
                for table_id in sorted(table_ids):  # one lock order: no deadlock between two
                    conn.execute(
                        "SELECT 1 FROM kyma.tables WHERE table_id = %s FOR UPDATE", (table_id,)
                    )
                    live = [
                        str(r[0])
                        for r in conn.execute(
                            "SELECT extent_id FROM kyma.manifest WHERE table_id = %s"
                            " AND removed_snapshot_id IS NULL",
                            (table_id,),
                        )
                    ]
                    found = _attempt(conn, table_id, [], live, summary, None)
                    results.append(CommitResult(*found, attempt))
            return results
        except (_HeadMoved, psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
            time.sleep(random.uniform(0, min(0.2, 0.002 * 2 ** min(attempt, 7))))
    raise CommitConflictError(f"TRUNCATE: the heads kept moving; gave up after {MAX_ATTEMPTS}")


def _attempt(
    conn: psycopg.Connection,
    table_id: int,
    added: Sequence[ExtentWriteResult],
    removed: Sequence[str],
    summary: dict[str, Any],
    payload: Payload | None,
    deletes: Sequence[DeletionVector] = (),
) -> tuple[int, int | None]:
    with conn.cursor() as cur:
        row = cur.execute(
            "SELECT current_snapshot_id FROM kyma.tables WHERE table_id = %s", (table_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"table {table_id} was dropped")
        (head,) = row
        count = extent_count(cur, table_id, head) + len(added) - len(set(removed))
        (snapshot_id,) = cur.execute(
            "INSERT INTO kyma.snapshots (table_id, parent_id, summary, extent_count)"
            " VALUES (%s, %s, %s, %s) RETURNING snapshot_id",
            (table_id, head, Jsonb(summary), count),
        ).fetchone()
        # The swap comes first: it locks the head row, so a concurrent commit waits here
        # and, losing the race, retries before it has inserted any manifest rows.
        cur.execute(
            "UPDATE kyma.tables SET current_snapshot_id = %s WHERE table_id = %s"
            " AND current_snapshot_id IS NOT DISTINCT FROM %s",
            (snapshot_id, table_id, head),
        )
        if cur.rowcount != 1:
            raise _HeadMoved()
        if added:
            # set_keys index the distinct and token sets for stage 1 (sql/011_manifest_scale.sql,
            # 013_large_sets_unindexed.sql); the stats are sent and parsed once for both.
            cur.executemany(
                "INSERT INTO kyma.manifest (extent_id, table_id, object_path, byte_size,"
                " row_count, block_count, min_ts, max_ts, column_stats, present_paths,"
                " added_snapshot_id, format, set_keys)"
                " SELECT %s, %s, %s, %s, %s, %s, %s, %s, s, %s, %s, %s, kyma.stat_keys(s,"
                " ARRAY(SELECT name FROM kyma.columns WHERE table_id = %s))"
                " FROM (SELECT %s::jsonb AS s) AS stats",
                [
                    (
                        e.extent_id,
                        table_id,
                        e.object_path,
                        e.byte_size,
                        e.row_count,
                        e.block_count,
                        e.min_timestamp_nanos,
                        e.max_timestamp_nanos,
                        e.present_paths,
                        snapshot_id,
                        e.format,
                        table_id,
                        Jsonb(e.column_stats),
                    )
                    for e in added
                ],
            )
        if deletes:
            _replace(cur, table_id, snapshot_id, deletes)
            removed = [*removed, *(d.extent_id for d in deletes)]
        if removed:
            cur.execute(
                "UPDATE kyma.manifest SET removed_snapshot_id = %s WHERE table_id = %s"
                " AND extent_id = ANY(%s::uuid[]) AND removed_snapshot_id IS NULL",
                (snapshot_id, table_id, list(removed)),
            )
            if cur.rowcount != len(set(removed)):
                raise StaleCommitError(
                    f"table {table_id}: {len(set(removed)) - cur.rowcount} of the extents to"
                    " remove are no longer live"
                )
        if payload is not None:
            payload(cur, snapshot_id)
        return snapshot_id, head


def _replace(
    cur: psycopg.Cursor, table_id: int, snapshot_id: int, deletes: Sequence[DeletionVector]
) -> None:
    """Copy each live extent's manifest row under its new id with its deletion vector (an
    extent no longer live is not copied: removing it below refuses the commit)."""
    cur.executemany(
        "INSERT INTO kyma.manifest (extent_id, table_id, object_path, byte_size, row_count,"
        " block_count, min_ts, max_ts, column_stats, present_paths, added_snapshot_id, format,"
        " set_keys, deletes, deleted_rows)"
        " SELECT %s, table_id, object_path, byte_size, row_count, block_count, min_ts, max_ts,"
        " column_stats, present_paths, %s, format, set_keys, %s, %s FROM kyma.manifest"
        " WHERE table_id = %s AND extent_id = %s AND removed_snapshot_id IS NULL",
        [
            (d.new_extent_id, snapshot_id, d.deletes, d.deleted_rows, table_id, d.extent_id)
            for d in deletes
        ],
    )


def extent_count(cur: psycopg.Cursor, table_id: int, snapshot_id: int | None) -> int:
    """Extents in ``snapshot_id``: kept with the snapshot, counted once for snapshots
    committed before counts were kept."""
    if snapshot_id is None:
        return 0
    row = cur.execute(
        "SELECT extent_count FROM kyma.snapshots WHERE snapshot_id = %s", (snapshot_id,)
    ).fetchone()
    if row is not None and row[0] is not None:
        return int(row[0])
    (count,) = cur.execute(
        f"SELECT count(*) FROM kyma.manifest WHERE {IN_SNAPSHOT}",
        (table_id, snapshot_id, snapshot_id),
    ).fetchone()
    return int(count)
