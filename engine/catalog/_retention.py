"""Snapshot expiry: old snapshots go, and so do the manifest rows only they could see."""

from __future__ import annotations

from datetime import datetime

import psycopg


def expire(conn: psycopg.Connection, table_id: int, cutoff: datetime) -> tuple[int, int]:
    """Delete ``table_id``'s snapshots created before ``cutoff`` (never the current one) and
    the manifest rows no remaining snapshot sees; (snapshots, rows) deleted.

    A row removed in snapshot R is seen by snapshots before R only: once every snapshot
    before R is gone it is unreachable, and orphan GC may delete its object.
    """
    with conn.transaction():
        row = conn.execute(
            "SELECT current_snapshot_id FROM kyma.tables WHERE table_id = %s FOR UPDATE",
            (table_id,),
        ).fetchone()
        if row is None or row[0] is None:
            return 0, 0
        (oldest_kept,) = conn.execute(
            "SELECT min(snapshot_id) FROM kyma.snapshots WHERE table_id = %s"
            " AND (created_at >= %s OR snapshot_id = %s)",
            (table_id, cutoff, row[0]),
        ).fetchone()
        snapshots = conn.execute(
            "DELETE FROM kyma.snapshots WHERE table_id = %s AND snapshot_id < %s",
            (table_id, oldest_kept),
        ).rowcount
        rows = conn.execute(
            "DELETE FROM kyma.manifest WHERE table_id = %s AND removed_snapshot_id <= %s",
            (table_id, oldest_kept),
        ).rowcount
    return snapshots, rows
