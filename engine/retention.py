"""Retention: a table keeps its rows for a window (the ``retention`` table option).

Whole extents whose newest row is older than the window are removed by one commit, and
snapshots older than the window are expired, so their extents become unreachable and
orphan GC deletes the objects. Rows are never rewritten: an extent straddling the edge
stays until all of it is old.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from kyma.engine.catalog import Catalog


@dataclass
class RetentionResult:
    extents_removed: int = 0
    snapshots_expired: int = 0
    extents_forgotten: int = 0


def apply_retention(
    catalog: Catalog, table: str, seconds: int, now_ns: int | None = None
) -> RetentionResult:
    """Drop ``table``'s extents older than ``seconds`` and expire older snapshots."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    cutoff_ns = now_ns - seconds * 1_000_000_000
    result = RetentionResult()
    old = [
        e.extent_id
        for e in catalog.live_extents(table)
        if e.max_ts is not None and e.max_ts < cutoff_ns
    ]
    if old:
        catalog.commit(table, [], removed=old, summary={"source": "retention"})
        result.extents_removed = len(old)
    cutoff = datetime.fromtimestamp(cutoff_ns / 1e9, UTC)
    result.snapshots_expired, result.extents_forgotten = catalog.expire_snapshots(table, cutoff)
    return result
