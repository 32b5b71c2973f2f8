"""What file-drop sources did with each object: ingested with its snapshot, or failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import psycopg

from kyma.engine.catalog import Migrations, Payload, Store, Transaction

MIGRATIONS = Migrations("kyma.ingest.filedrop")

_COLUMNS = "object_key, size, modified, sha256, state, rows, snapshot_id, error, updated_at"
_UPSERT = (
    "INSERT INTO kyma.source_files"
    " (source, object_key, size, modified, sha256, state, rows, snapshot_id, error)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (source, object_key) DO UPDATE SET size = EXCLUDED.size,"
    " modified = EXCLUDED.modified, sha256 = EXCLUDED.sha256, state = EXCLUDED.state,"
    " rows = EXCLUDED.rows, snapshot_id = EXCLUDED.snapshot_id, error = EXCLUDED.error,"
    " updated_at = now()"
)


@dataclass(frozen=True)
class SourceFile:
    key: str
    size: int
    modified: datetime
    sha256: str | None
    state: str  # "ingested" or "failed"
    rows: int | None
    snapshot_id: int | None
    error: str | None
    updated_at: datetime | None = None


def ingested(
    source: str, key: str, size: int, modified: datetime, sha256: str, rows: Callable[[], int]
) -> Payload:
    """A commit payload recording the file as ingested by the snapshot being committed.

    ``rows`` is asked at commit time: the file was still being read when this was built.
    """

    def payload(cur: Transaction, snapshot_id: int) -> None:
        cur.execute(
            _UPSERT, (source, key, size, modified, sha256, "ingested", rows(), snapshot_id, None)
        )

    return payload


def all_ingested(source: str, files: list[tuple[str, int, datetime, str, int]]) -> Payload:
    """One commit payload recording several files (key, size, modified, sha256, rows) as
    ingested by the snapshot being committed, in one round trip."""

    def payload(cur: Transaction, snapshot_id: int) -> None:
        rows = [(source, *f[:4], "ingested", f[4], snapshot_id, None) for f in files]
        cur.executemany(_UPSERT, rows)

    return payload


def record(conn: psycopg.Connection, source: str, file: SourceFile) -> None:
    """Record what happened to a file outside a commit (it failed, or it was a replay)."""
    conn.execute(
        _UPSERT,
        (
            source,
            file.key,
            file.size,
            file.modified,
            file.sha256,
            file.state,
            file.rows,
            file.snapshot_id,
            file.error,
        ),
    )


def files(conn: psycopg.Connection, source: str) -> list[SourceFile]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM kyma.source_files WHERE source = %s ORDER BY object_key",
        (source,),
    ).fetchall()
    return [SourceFile(*row) for row in rows]


class FileStore(Store):
    """What file-drop sources did with each object (``kyma.source_files``)."""

    migrations = (MIGRATIONS,)

    def files(self, source: str) -> list[SourceFile]:
        with self.db.connection() as conn:
            return files(conn, source)

    def record(self, source: str, file: SourceFile) -> None:
        with self.db.connection() as conn:
            record(conn, source, file)

    def forget(self, conn: psycopg.Connection, source: str) -> None:
        """Drop ``source``'s file records, in the caller's transaction."""
        conn.execute("DELETE FROM kyma.source_files WHERE source = %s", (source,))
