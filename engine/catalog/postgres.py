"""The Postgres catalog: tables, columns, snapshots and the extent manifest."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import psycopg
import pyarrow as pa
from psycopg import sql
from psycopg.types.json import Jsonb

from kyma.engine.catalog import _column_stats, _commit, _retention, _views
from kyma.engine.catalog._database import ENGINE_MIGRATIONS, CatalogDatabase
from kyma.engine.catalog._known_tables import VERSION, KnownTables, TrustedTables, asked
from kyma.engine.catalog._model import (
    CommitResult,
    DeletionVector,
    ExtentRef,
    ManifestEntry,
    SnapshotInfo,
    TableInfo,
    ViewInfo,
)
from kyma.engine.catalog._options import check_options
from kyma.engine.catalog._presence import Presence
from kyma.engine.catalog._prune import IN_SNAPSHOT, extent_condition
from kyma.engine.catalog.base import Catalog, Payload, Watch
from kyma.engine.errors import (
    AlreadyExistsError,
    DuplicateRelationError,
    NotFoundError,
    QueryTimeoutError,
    SchemaError,
)
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.types import DEFAULT_COLUMN_NAMES, DEFAULT_COLUMNS, Column, KymaType

log = logging.getLogger("kyma.catalog")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}(\.[A-Za-z_][A-Za-z0-9_]{0,127})*")
MAX_COLUMN_NAME = 255
_ENTRY_COLUMNS = (
    "extent_id::text, object_path, byte_size, row_count, block_count, min_ts, max_ts,"
    " column_stats, present_paths, added_snapshot_id, format, deletes, deleted_rows"
)


_REF_COLUMNS = (
    "extent_id::text, object_path, byte_size, row_count, block_count, deletes, deleted_rows,"
    " min_ts, max_ts"
)


F = TypeVar("F", bound=Callable[..., Any])


def _writes(method: F) -> F:
    """A catalog method that may change tables: what was read before is not trusted after
    it (``_presence``), whether it returns or raises."""

    @functools.wraps(method)
    def wrote(self: PostgresCatalog, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            with self._epoch_lock:
                self._epoch += 1

    return wrote  # type: ignore[return-value]


_EXTENT_COUNT = (
    "SELECT coalesce((SELECT extent_count FROM kyma.snapshots WHERE snapshot_id = %s),"
    f" (SELECT count(*) FROM kyma.manifest WHERE {IN_SNAPSHOT}))"
)
"""``_commit.extent_count`` in one statement; parameters: the snapshot id, then
``IN_SNAPSHOT``'s."""


@contextmanager
def _unwatched(cancel: Callable[[], None]) -> Iterator[float | None]:
    yield None


def check_identifier(kind: str, name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise SchemaError(
            f"invalid {kind} name {name!r}: expected a letter or _ then letters, digits or _"
            " (at most 128)"
        )
    return name


def check_column_name(name: str) -> str:
    """A column name: identifiers joined by dots (records flatten to ``a.b``), at most 255."""
    if len(name) > MAX_COLUMN_NAME or not _DOTTED.fullmatch(name):
        raise SchemaError(
            f"invalid column name {name!r}: expected identifiers (a letter or _ then letters,"
            f" digits or _) joined by dots, at most {MAX_COLUMN_NAME} characters"
        )
    return name


class PostgresCatalog(Catalog):
    """kyma's catalog operations over the shared catalog database."""

    def __init__(self, db: CatalogDatabase, *, owns_db: bool = False) -> None:
        """``owns_db``: ``close`` closes ``db`` too (see ``connect``)."""
        self.db = db
        self.url = db.url
        self.commit_listeners: list[Callable[[_commit.CommitEvent], None]] = []
        self._owns_db = owns_db
        self._known = KnownTables()
        self._trusted = TrustedTables()
        self._epoch = 0
        self._epoch_lock = threading.Lock()
        self.version_reads = 0
        """Statements that asked the catalog for tables' versions (not trusted as read)."""
        db.require(ENGINE_MIGRATIONS)
        self._conn = db.connection
        self._presence = Presence(db.url, self._run)

    @classmethod
    def connect(
        cls, url: str, *, pool_size: int = 10, statement_timeout_seconds: float = 0
    ) -> PostgresCatalog:
        """A catalog on its own database pool (closed with it), for the engine alone."""
        db = CatalogDatabase(
            url,
            (ENGINE_MIGRATIONS,),
            pool_size=pool_size,
            statement_timeout_seconds=statement_timeout_seconds,
        )
        return cls(db, owns_db=True)

    def close(self) -> None:
        self._presence.close()
        if self._owns_db:
            self.db.close()

    def _run(self, statement: str) -> None:
        with self._conn() as conn:
            conn.execute(statement)  # type: ignore[call-overload]

    def ping(self, timeout: float = 30) -> None:
        with self._conn(timeout) as conn:
            conn.execute("SELECT 1")

    # ------------------------------------------------------------ tables and columns

    @_writes
    def create_table(
        self,
        name: str,
        columns: Sequence[Column],
        *,
        if_not_exists: bool = False,
        options: dict[str, Any] | None = None,
    ) -> TableInfo:
        check_identifier("table", name)
        options = check_options(options or {})
        seen: set[str] = set()
        for col in columns:
            check_column_name(col.name)
            if col.name in DEFAULT_COLUMN_NAMES:
                raise SchemaError(f"column {col.name!r} is a default column of every table")
            if col.name in seen:
                raise SchemaError(f"column {col.name!r} appears twice")
            seen.add(col.name)
        with self._conn() as conn, conn.transaction():
            try:
                row = conn.execute(
                    "INSERT INTO kyma.tables (name, options) VALUES (%s, %s)"
                    " ON CONFLICT (name) DO NOTHING RETURNING table_id",
                    (name, Jsonb(options)),
                ).fetchone()
            except psycopg.errors.DuplicateTable:  # a view has the name
                raise DuplicateRelationError(f'relation "{name}" already exists') from None
            if row is None:
                if if_not_exists:
                    return self._table(conn, name)
                raise DuplicateRelationError(f'relation "{name}" already exists')
            all_columns = [*DEFAULT_COLUMNS, *columns]
            conn.cursor().executemany(
                "INSERT INTO kyma.columns (table_id, name, ordinal, type, nullable)"
                " VALUES (%s, %s, %s, %s, %s)",
                [(row[0], c.name, i, c.type.name, c.nullable) for i, c in enumerate(all_columns)],
            )
            return self._table(conn, name)

    @_writes
    def add_columns(
        self,
        table: str,
        columns: Sequence[Column],
        *,
        if_not_exists: bool = False,
        origins: dict[str, dict[str, Any]] | None = None,
    ) -> TableInfo:
        """Widen a table by nullable columns in one transaction (schema only widens).

        A column's ``evolved_from`` and its ``origins`` entry (typed evolution) are kept;
        with ``if_not_exists`` a column that exists with the same type and origin is skipped.
        """
        origins = origins or {}
        for column in columns:
            check_column_name(column.name)
        with self._conn() as conn, conn.transaction():
            info = self._table(conn, table, lock=True)
            ordinal = len(info.columns)
            for column in columns:
                origin = origins.get(column.name)
                existing = info.column(column.name)
                if existing is not None:
                    same = existing.type == column.type and info.origins.get(column.name) == origin
                    if if_not_exists and same:
                        continue
                    raise AlreadyExistsError(
                        f"column {column.name!r} already exists in table {table!r}"
                        f" with type {existing.type}"
                    )
                conn.execute(
                    "INSERT INTO kyma.columns (table_id, name, ordinal, type, nullable,"
                    " evolved_from, origin) VALUES (%s, %s, %s, %s, true, %s, %s)",
                    (
                        info.table_id,
                        column.name,
                        ordinal,
                        column.type.name,
                        column.evolved_from,
                        None if origin is None else Jsonb(origin),
                    ),
                )
                ordinal += 1
            # the row's new version tells readers the columns changed (``_known_tables``)
            conn.execute(
                "UPDATE kyma.tables SET options = options WHERE table_id = %s", (info.table_id,)
            )
            return self._table(conn, table)

    @_writes
    def set_table_options(self, table: str, options: dict[str, Any]) -> TableInfo:
        """Merge ``options`` into a table's options (``ALTER TABLE … SET (...)``)."""
        options = check_options(options)
        with self._conn() as conn, conn.transaction():
            info = self._table(conn, table, lock=True)
            conn.execute(
                "UPDATE kyma.tables SET options = options || %s WHERE table_id = %s",
                (Jsonb(options), info.table_id),
            )
            return self._table(conn, table)

    def column_stats(self, table: str) -> dict[str, dict[str, Any]]:
        """Written-data statistics per column name (columns never written are absent)."""
        with self._conn() as conn:
            return _column_stats.read(conn, self._table(conn, table).table_id)

    def columns_added(self, table: str) -> dict[str, datetime]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT name, added_at FROM kyma.columns WHERE table_id = %s",
                (self._table(conn, table).table_id,),
            ).fetchall()
        return dict(rows)

    @_writes
    def drop_relations(
        self, names: Sequence[str], kind: str, *, if_exists: bool = False, cascade: bool = False
    ) -> int:
        with self._conn() as conn:
            return _views.drop(conn, names, kind, if_exists=if_exists, cascade=cascade)

    # ------------------------------------------------------------ views

    @_writes
    def create_view(
        self,
        name: str,
        query: str,
        schema: pa.Schema,
        reads: Sequence[str],
        *,
        replace: bool = False,
        materialized: ViewInfo | None = None,
    ) -> ViewInfo:
        check_identifier("view", name)
        with self._conn() as conn:
            return _views.create(
                conn, name, query, schema, reads, replace=replace, materialized=materialized
            )

    def get_views(self, names: Collection[str]) -> dict[str, ViewInfo]:
        with self._conn() as conn:
            return _views.get(conn, names)

    def list_views(self) -> list[ViewInfo]:
        with self._conn() as conn:
            return _views.every(conn)

    def get_table(self, name: str) -> TableInfo:
        if "\x00" in name:  # Postgres text cannot hold it: no table can have it
            check_identifier("table", name)
        with self._conn() as conn:
            return self._table(conn, name)

    def get_tables(self, names: Collection[str]) -> dict[str, TableInfo]:
        """The tables of ``names`` that exist with their columns: one small catalog statement
        for their versions, and a second for those not already known (``_known_tables``);
        none while this catalog is sole and read them since its last write (``_presence``)."""
        wanted = sorted({n for n in names if "\x00" not in n})  # no table can have NUL
        if not wanted:
            return {}
        token = self._token()
        if token is not None and (trusted := self._trusted.get(token, wanted)) is not None:
            return trusted
        found = self._read_tables(wanted)
        if token is not None:
            self._trusted.put(token, wanted, found)
        return found

    def _token(self) -> Hashable | None:
        """What tables read now are trusted under while this catalog is sole, or None."""
        sole = self._presence.token()
        return None if sole is None else (sole, self._epoch)

    def _read_tables(self, wanted: list[str]) -> dict[str, TableInfo]:
        self.version_reads += 1
        asked()
        found: dict[str, TableInfo] = {}
        with self._conn() as conn:
            versions = conn.execute(
                f"SELECT t.name, {VERSION} FROM kyma.tables t WHERE t.name = ANY(%s)", (wanted,)
            ).fetchall()
            for name, *version in versions:
                info = self._known.get((name, *version))
                if info is not None:
                    found[name] = info
            stale = [name for name, *_ in versions if name not in found]
            if not stale:
                return found
            rows = conn.execute(
                "SELECT t.table_id, t.name, t.current_snapshot_id, t.created_at, t.options,"
                " (SELECT json_agg(json_build_array(c.name, c.type, c.nullable, c.evolved_from,"
                f" c.origin) ORDER BY c.ordinal) FROM kyma.columns c WHERE c.table_id ="
                f" t.table_id), {VERSION} FROM kyma.tables t WHERE t.name = ANY(%s)",
                (stale,),
            ).fetchall()
        for row in rows:
            info = _table_info(row[:5], row[5] or [])
            self._known.put((row[1], *row[6:]), info)
            found[row[1]] = info
        return found

    def list_tables(self) -> list[TableInfo]:
        with self._conn() as conn:
            names = [n for (n,) in conn.execute("SELECT name FROM kyma.tables ORDER BY name")]
            return [self._table(conn, n) for n in names]

    def _table(self, conn: psycopg.Connection, name: str, *, lock: bool = False) -> TableInfo:
        row = conn.execute(
            "SELECT table_id, name, current_snapshot_id, created_at, options"
            " FROM kyma.tables WHERE name = %s" + (" FOR UPDATE" if lock else ""),
            (name,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"table {name!r} does not exist")
        rows = conn.execute(
            "SELECT name, type, nullable, evolved_from, origin FROM kyma.columns"
            " WHERE table_id = %s ORDER BY ordinal",
            (row[0],),
        ).fetchall()
        return _table_info(row, rows)

    # ------------------------------------------------------------ snapshots and extents

    @_writes
    def commit(
        self,
        table: str,
        added: Sequence[ExtentWriteResult],
        removed: Sequence[str] = (),
        *,
        summary: dict[str, Any] | None = None,
        payload: Payload | None = None,
        deletes: Sequence[DeletionVector] = (),
    ) -> CommitResult:
        """Publish ``added`` (and retire ``removed`` extent ids, and replace extents by their
        copies with the deletion vectors of ``deletes``) as one new snapshot."""
        info = self.get_table(table)
        summary = {
            "added_extents": len(added),
            "removed_extents": len(removed),
            "added_rows": sum(e.row_count for e in added),
            **({"deletion_vectors": len(deletes)} if deletes else {}),
            **(summary or {}),
        }
        started = time.perf_counter()
        with self._conn() as conn:
            result = _commit.commit(conn, info.table_id, added, removed, summary, payload, deletes)
        event = _commit.CommitEvent(
            table,
            str(summary.get("source", "")),
            summary["added_rows"],
            sum(e.byte_size for e in added),
            result.attempts,
            time.perf_counter() - started,
            result.snapshot_id,
            tuple(added),
            not removed and not deletes,
        )
        for listener in self.commit_listeners:
            try:
                listener(event)
            except Exception:  # a listener never fails a commit that landed
                log.exception("commit listener failed")
        return result

    @_writes
    def truncate(self, tables: Sequence[str], summary: dict[str, Any]) -> None:
        ids = [self.get_table(name).table_id for name in tables]
        with self._conn() as conn:
            _commit.truncate(conn, ids, summary)

    def live_extents(self, table: str, snapshot_id: int | None = None) -> list[ManifestEntry]:
        """The extents of ``snapshot_id`` (default: the current snapshot), with their stats."""
        info = self.get_table(table)
        snapshot = info.current_snapshot_id if snapshot_id is None else snapshot_id
        if snapshot is None:
            return []
        with self._conn() as conn:
            if snapshot_id is not None:
                self._check_snapshot(conn, info, snapshot_id)
            rows = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM kyma.manifest WHERE {IN_SNAPSHOT}"
                " ORDER BY added_snapshot_id, extent_id",
                (info.table_id, snapshot, snapshot),
            ).fetchall()
        return [ManifestEntry(*r) for r in rows]

    def prune_extents(
        self,
        table: str,
        snapshot_id: int | None,
        predicate: BlockPredicate | None,
        watch: Watch | None = None,
        info: TableInfo | None = None,
    ) -> tuple[int, list[ExtentRef]]:
        """Stage 1: (extents in the snapshot, those whose catalog stats may match).

        Only the survivors travel back, without their stats. ``watch`` (the caller's
        deadline) is given the connection's cancel and yields the seconds left: the
        statements run at most that long, and are cancelled when the caller gives up.
        ``info``: the table as the caller already read it (its current snapshot), if it did.
        """
        info = info if info is not None else self.get_table(table)
        snapshot = info.current_snapshot_id if snapshot_id is None else snapshot_id
        if snapshot is None:
            return 0, []
        params = (info.table_id, snapshot, snapshot)
        with self._conn() as conn, (watch or _unwatched)(conn.cancel_safe) as seconds:
            if snapshot_id is not None:
                self._check_snapshot(conn, info, snapshot_id)
            query = sql.SQL(
                f"SELECT {_REF_COLUMNS} FROM kyma.manifest WHERE {IN_SNAPSHOT} AND {{kept}}"
                " ORDER BY min_ts NULLS FIRST, extent_id"
            ).format(kept=extent_condition(predicate))
            try:  # the statements sent together: one round trip, not five
                with conn.pipeline():
                    conn.execute("BEGIN")
                    if seconds is not None:
                        ms = f"{max(1, int(seconds * 1000))}ms"
                        conn.execute("SELECT set_config('statement_timeout', %s, true)", (ms,))
                    counted = conn.execute(_EXTENT_COUNT, (snapshot, *params))
                    found = conn.execute(query, params)
                    conn.execute("COMMIT")
                (total,) = counted.fetchone()  # type: ignore[misc]
                rows = found.fetchall()
            except psycopg.errors.QueryCanceled:
                conn.execute("ROLLBACK")  # the COMMIT after the cancelled one did not run
                raise QueryTimeoutError(
                    f"stage-1 pruning of {table!r} ran past its time in the catalog and was"
                    " cancelled",
                    "query_timeout_seconds",
                ) from None
        return total, [ExtentRef(*r) for r in rows]

    def extents(self, table: str, extent_ids: Collection[str]) -> list[ExtentRef]:
        info = self.get_table(table)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {_REF_COLUMNS} FROM kyma.manifest"
                " WHERE table_id = %s AND extent_id = ANY(%s::uuid[])",
                (info.table_id, list(extent_ids)),
            ).fetchall()
        return [ExtentRef(*r) for r in rows]

    def _check_snapshot(self, conn: psycopg.Connection, info: TableInfo, snapshot_id: int) -> None:
        row = conn.execute(
            "SELECT 1 FROM kyma.snapshots WHERE table_id = %s AND snapshot_id = %s",
            (info.table_id, snapshot_id),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"table {info.name!r} has no snapshot {snapshot_id}")

    def snapshots(self, table: str, last: int | None = None) -> list[SnapshotInfo]:
        info = self.get_table(table)
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT snapshot_id, parent_id, created_at, summary FROM kyma.snapshots"
                " WHERE table_id = %s ORDER BY snapshot_id DESC LIMIT %s",
                (info.table_id, last),
            ).fetchall()
        return [SnapshotInfo(*r) for r in reversed(rows)]

    @_writes
    def expire_snapshots(self, table: str, cutoff: datetime) -> tuple[int, int]:
        """Forget snapshots older than ``cutoff`` (not the current); (snapshots, extents)."""
        info = self.get_table(table)
        with self._conn() as conn:
            return _retention.expire(conn, info.table_id, cutoff)

    def retired_objects(self, table: str) -> set[str]:
        info = self.get_table(table)
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT DISTINCT object_path FROM kyma.manifest"
                " WHERE table_id = %s AND removed_snapshot_id IS NOT NULL",
                (info.table_id,),
            )
            return {p for (p,) in rows}

    def referenced_objects(self) -> set[str]:
        """Object paths any manifest row (of any retained snapshot) points at, and those the
        stores on the catalog database keep alive (CDC snapshot chunks not yet committed)."""
        with self._conn() as conn:
            found = {p for (p,) in conn.execute("SELECT object_path FROM kyma.manifest")}
            for references in self.db.references:
                found |= references(conn)
            return found


def _table_info(table: Sequence[Any], columns: Sequence[Sequence[Any]]) -> TableInfo:
    """A table's row (id, name, current snapshot, created, options) and its columns' rows
    (name, type, nullable, evolved_from, origin) in ordinal order."""
    parsed = tuple(Column(n, KymaType.parse(t), null, ev) for n, t, null, ev, _ in columns)
    origins = {n: origin for n, *_, origin in columns if origin is not None}
    table_id, name, snapshot, created_at, options = table
    return TableInfo(table_id, name, parsed, snapshot, created_at, options, origins)
