"""Written-data statistics per column: rows, nulls, the value types seen, and the first and
last snapshot that wrote a value. The write path hands them over as a commit payload, so
they change in the transaction that publishes the rows, or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from kyma.engine.catalog.base import Payload, Transaction


@dataclass(frozen=True)
class ColumnWrite:
    """What one commit wrote into one column."""

    name: str
    rows: int
    nulls: int
    types: tuple[str, ...] = ()


def record(table: str, writes: Sequence[ColumnWrite]) -> Payload:
    """A payload adding ``writes`` to the statistics of ``table``'s columns."""

    def run(tx: Transaction, snapshot_id: int) -> None:
        tx.executemany(
            "INSERT INTO kyma.column_stats AS s (table_id, name, rows, nulls, types_seen,"
            " first_snapshot_id, last_snapshot_id)"
            " SELECT table_id, %(name)s, %(rows)s, %(nulls)s, %(types)s, %(seen)s, %(seen)s"
            " FROM kyma.tables WHERE name = %(table)s"
            " ON CONFLICT (table_id, name) DO UPDATE SET rows = s.rows + EXCLUDED.rows,"
            " nulls = s.nulls + EXCLUDED.nulls,"
            " types_seen = ARRAY(SELECT DISTINCT unnest(s.types_seen || EXCLUDED.types_seen)"
            " ORDER BY 1),"
            " first_snapshot_id = COALESCE(s.first_snapshot_id, EXCLUDED.first_snapshot_id),"
            " last_snapshot_id = COALESCE(EXCLUDED.last_snapshot_id, s.last_snapshot_id)",
            [
                {
                    "table": table,
                    "name": w.name,
                    "rows": w.rows,
                    "nulls": w.nulls,
                    "types": sorted(w.types),
                    "seen": snapshot_id if w.rows > w.nulls else None,
                }
                for w in writes
            ],
        )

    return run


def read(conn: psycopg.Connection, table_id: int) -> dict[str, dict[str, Any]]:
    rows = conn.execute(
        "SELECT name, rows, nulls, types_seen, first_snapshot_id, last_snapshot_id"
        " FROM kyma.column_stats WHERE table_id = %s",
        (table_id,),
    ).fetchall()
    return {
        name: {
            "rows": n,
            "nulls": nulls,
            "types_seen": types,
            "first_seen_snapshot": first,
            "last_seen_snapshot": last,
        }
        for name, n, nulls, types, first, last in rows
    }
