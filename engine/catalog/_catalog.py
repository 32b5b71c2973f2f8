"""The catalog: tables, columns, snapshots and the extent manifest, in Postgres."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from typing import Any

import psycopg
import psycopg_pool
from psycopg import sql
from psycopg.types.json import Jsonb

from kyma.engine.catalog import (
    _cdc,
    _column_stats,
    _commit,
    _connectors,
    _files,
    _ledger,
    _positions,
    _retention,
    _sources,
    _tokens,
)
from kyma.engine.catalog._connectors import ConnectorRecord
from kyma.engine.catalog._migrate import migrate
from kyma.engine.catalog._model import (
    CommitResult,
    ExtentRef,
    ManifestEntry,
    SnapshotInfo,
    TableInfo,
)
from kyma.engine.catalog._options import check_options
from kyma.engine.catalog._prune import IN_SNAPSHOT, extent_condition
from kyma.engine.errors import (
    AlreadyExistsError,
    CatalogUnavailableError,
    NotFoundError,
    QueryTimeoutError,
    SchemaError,
)
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.types import DEFAULT_COLUMN_NAMES, DEFAULT_COLUMNS, Column, KymaType

log = logging.getLogger("kyma.catalog")
# Given a cancel function, a context that yields the seconds left (None: no deadline).
Watch = Callable[[Callable[[], None]], AbstractContextManager[float | None]]
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}(\.[A-Za-z_][A-Za-z0-9_]{0,127})*")
MAX_COLUMN_NAME = 255
LEDGER_RETENTION = timedelta(hours=25)
_ENTRY_COLUMNS = (
    "extent_id::text, object_path, byte_size, row_count, block_count, min_ts, max_ts,"
    " column_stats, present_paths, added_snapshot_id, format"
)


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


class Catalog:
    """A connection pool on the catalog database, with kyma's catalog operations."""

    def __init__(
        self, url: str, *, pool_size: int = 10, statement_timeout_seconds: float = 0
    ) -> None:
        """``statement_timeout_seconds`` (0: none) bounds every catalog statement, so no
        statement can run on in the catalog database after its caller gave up."""
        self.url = url
        self.commit_listeners: list[Callable[[_commit.CommitEvent], None]] = []
        self.statement_timeout_seconds = statement_timeout_seconds
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            open=False,
            kwargs={"autocommit": True},
            configure=self._configure,
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except psycopg_pool.PoolTimeout as e:
            raise CatalogUnavailableError(f"catalog unreachable: {e}") from None
        with self._conn() as conn:
            self.migrations_applied = migrate(conn)

    def close(self) -> None:
        self._pool.close()

    def _configure(self, conn: psycopg.Connection) -> None:
        if self.statement_timeout_seconds:
            ms = max(1, int(self.statement_timeout_seconds * 1000))
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{ms}ms",))

    @contextmanager
    def _conn(self, timeout: float = 30) -> Iterator[psycopg.Connection]:
        """A pooled connection; driver connection failures become CatalogUnavailableError."""
        try:
            with self._pool.connection(timeout=timeout) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as e:
            if isinstance(e, psycopg.errors.QueryCanceled):
                raise
            raise CatalogUnavailableError(f"catalog unavailable: {e}") from e

    def ping(self, timeout: float = 30) -> None:
        with self._conn(timeout) as conn:
            conn.execute("SELECT 1")

    # ------------------------------------------------------------ tables and columns

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
            row = conn.execute(
                "INSERT INTO kyma.tables (name, options) VALUES (%s, %s)"
                " ON CONFLICT (name) DO NOTHING RETURNING table_id",
                (name, Jsonb(options)),
            ).fetchone()
            if row is None:
                if if_not_exists:
                    return self._table(conn, name)
                raise AlreadyExistsError(f"table {name!r} already exists")
            all_columns = [*DEFAULT_COLUMNS, *columns]
            conn.cursor().executemany(
                "INSERT INTO kyma.columns (table_id, name, ordinal, type, nullable)"
                " VALUES (%s, %s, %s, %s, %s)",
                [(row[0], c.name, i, c.type.name, c.nullable) for i, c in enumerate(all_columns)],
            )
            return self._table(conn, name)

    def add_column(self, table: str, column: Column, *, if_not_exists: bool = False) -> TableInfo:
        """Widen a table by one nullable column (schema only widens)."""
        return self.add_columns(table, [column], if_not_exists=if_not_exists)

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
            return self._table(conn, table)

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

    def drop_table(self, name: str, *, if_exists: bool = False) -> bool:
        """Drop a table; its objects become orphans that GC removes. True if it existed."""
        with self._conn() as conn:
            cur = conn.execute("DELETE FROM kyma.tables WHERE name = %s", (name,))
        if cur.rowcount == 0 and not if_exists:
            raise NotFoundError(f"table {name!r} does not exist")
        return cur.rowcount > 0

    def get_table(self, name: str) -> TableInfo:
        if "\x00" in name:  # Postgres text cannot hold it: no table can have it
            check_identifier("table", name)
        with self._conn() as conn:
            return self._table(conn, name)

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
        columns = tuple(Column(n, KymaType.parse(t), null, ev) for n, t, null, ev, _ in rows)
        origins = {n: origin for n, *_, origin in rows if origin is not None}
        return TableInfo(row[0], row[1], columns, row[2], row[3], row[4], origins)

    # ------------------------------------------------------------ connectors

    def create_connector(
        self, name: str, type_: str, definition: dict[str, Any]
    ) -> ConnectorRecord:
        check_identifier("connector", name)
        with self._conn() as conn:
            return _connectors.create(conn, name, type_, definition)

    def get_connector(self, key: str) -> ConnectorRecord:
        """A connector by name, or by id when ``key`` is all digits; NotFoundError if none."""
        with self._conn() as conn:
            return _connectors.get(conn, key)

    def list_connectors(self) -> list[ConnectorRecord]:
        with self._conn() as conn:
            return _connectors.list_all(conn)

    def update_connector(self, connector_id: int, definition: dict[str, Any]) -> ConnectorRecord:
        with self._conn() as conn:
            return _connectors.update(conn, connector_id, definition)

    def drop_connector(self, key: str) -> ConnectorRecord:
        with self._conn() as conn:
            return _connectors.drop(conn, key)

    def set_connector_state(
        self, connector_id: int, *, disabled_reason: str | None, last_error: str | None
    ) -> None:
        with self._conn() as conn:
            _connectors.set_state(
                conn, connector_id, disabled_reason=disabled_reason, last_error=last_error
            )

    # ------------------------------------------------------------ CDC sync state

    def cdc_state(self, connector_id: int) -> _cdc.CdcState:
        with self._conn() as conn:
            return _cdc.read(conn, connector_id)

    def cdc_prepare(
        self, connector_id: int, slot_name: str, tables: Sequence[tuple[str, str, Sequence[str]]]
    ) -> None:
        with self._conn() as conn:
            _cdc.prepare(conn, connector_id, slot_name, tables)

    def cdc_claim(self, connector_id: int) -> int:
        with self._conn() as conn:
            return _cdc.claim(conn, connector_id)

    def cdc_set_slot(self, connector_id: int, epoch: int, consistent_lsn: int | None) -> None:
        with self._conn() as conn:
            _cdc.set_slot(conn, connector_id, epoch, consistent_lsn)

    def cdc_confirm(self, connector_id: int, epoch: int, lsn: int) -> None:
        with self._conn() as conn:
            _cdc.confirm(conn, connector_id, epoch, lsn)

    def cdc_reset(self, connector_id: int) -> None:
        with self._conn() as conn:
            _cdc.reset(conn, connector_id)

    def cdc_chunks(self, connector_id: int, source_table: str) -> list[_cdc.Chunk]:
        with self._conn() as conn:
            return _cdc.chunks(conn, connector_id, source_table)

    def cdc_plan_chunks(
        self, connector_id: int, source_table: str, planned: Sequence[_cdc.Chunk]
    ) -> list[_cdc.Chunk]:
        with self._conn() as conn:
            return _cdc.plan_chunks(conn, connector_id, source_table, planned)

    # ------------------------------------------------------------ ingest sources

    def create_source(
        self, name: str, type_: str, table: str, definition: dict[str, Any]
    ) -> _sources.SourceRecord:
        check_identifier("source", name)
        with self._conn() as conn:
            return _sources.create(conn, name, type_, table, definition)

    def get_source(self, name: str) -> _sources.SourceRecord:
        with self._conn() as conn:
            return _sources.get(conn, name)

    def list_sources(self) -> list[_sources.SourceRecord]:
        with self._conn() as conn:
            return _sources.list_all(conn)

    def drop_source(self, name: str) -> None:
        with self._conn() as conn:
            _sources.drop(conn, name)

    # ------------------------------------------------------------ API tokens

    def create_token(
        self, sha256: bytes, scopes: list[str], tables: list[str] | None, name: str | None
    ) -> _tokens.TokenRecord:
        with self._conn() as conn:
            return _tokens.create(conn, sha256, scopes, tables, name)

    def token_by_hash(self, sha256: bytes) -> _tokens.TokenRecord | None:
        with self._conn() as conn:
            return _tokens.by_hash(conn, sha256)

    def list_tokens(self) -> list[_tokens.TokenRecord]:
        with self._conn() as conn:
            return _tokens.list_all(conn)

    def revoke_token(self, token_id: int) -> _tokens.TokenRecord:
        with self._conn() as conn:
            return _tokens.revoke(conn, token_id)

    # ------------------------------------------------------------ source positions

    def claim_partitions(
        self, source: str, stream: str, partitions: list[int], start: int = 0
    ) -> dict[int, _positions.Claim]:
        """Take ownership of partitions: new epochs, and the positions to read from."""
        with self._conn() as conn:
            return _positions.claim(conn, source, stream, partitions, start)

    def source_positions(self, source: str) -> list[_positions.SourcePosition]:
        with self._conn() as conn:
            return _positions.positions(conn, source)

    # ------------------------------------------------------------ file-drop files

    def source_files(self, source: str) -> list[_files.SourceFile]:
        with self._conn() as conn:
            return _files.files(conn, source)

    def record_source_file(self, source: str, file: _files.SourceFile) -> None:
        with self._conn() as conn:
            _files.record(conn, source, file)

    # ------------------------------------------------------------ snapshots and extents

    def commit(
        self,
        table: str,
        added: Sequence[ExtentWriteResult],
        removed: Sequence[str] = (),
        *,
        summary: dict[str, Any] | None = None,
        payload: _commit.Payload | None = None,
    ) -> CommitResult:
        """Publish ``added`` (and retire ``removed`` extent ids) as one new snapshot."""
        info = self.get_table(table)
        summary = {
            "added_extents": len(added),
            "removed_extents": len(removed),
            "added_rows": sum(e.row_count for e in added),
            **(summary or {}),
        }
        started = time.perf_counter()
        with self._conn() as conn:
            result = _commit.commit(conn, info.table_id, added, removed, summary, payload)
        event = _commit.CommitEvent(
            table,
            str(summary.get("source", "")),
            summary["added_rows"],
            sum(e.byte_size for e in added),
            result.attempts,
            time.perf_counter() - started,
        )
        for listener in self.commit_listeners:
            try:
                listener(event)
            except Exception:  # a listener never fails a commit that landed
                log.exception("commit listener failed")
        return result

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
    ) -> tuple[int, list[ExtentRef]]:
        """Stage 1: (extents in the snapshot, those whose catalog stats may match).

        Only the survivors travel back, without their stats. ``watch`` (the caller's
        deadline) is given the connection's cancel and yields the seconds left: the
        statements run at most that long, and are cancelled when the caller gives up.
        """
        info = self.get_table(table)
        snapshot = info.current_snapshot_id if snapshot_id is None else snapshot_id
        if snapshot is None:
            return 0, []
        params = (info.table_id, snapshot, snapshot)
        with self._conn() as conn, (watch or _unwatched)(conn.cancel_safe) as seconds:
            if snapshot_id is not None:
                self._check_snapshot(conn, info, snapshot_id)
            query = sql.SQL(
                "SELECT extent_id::text, object_path, byte_size, row_count, block_count"
                f" FROM kyma.manifest WHERE {IN_SNAPSHOT} AND {{kept}}"
                " ORDER BY min_ts NULLS FIRST, extent_id"
            ).format(kept=extent_condition(predicate))
            try:
                with conn.transaction():
                    if seconds is not None:
                        ms = f"{max(1, int(seconds * 1000))}ms"
                        conn.execute("SELECT set_config('statement_timeout', %s, true)", (ms,))
                    total = _commit.extent_count(conn.cursor(), info.table_id, snapshot)
                    rows = conn.execute(query, params).fetchall()
            except psycopg.errors.QueryCanceled:
                raise QueryTimeoutError(
                    f"stage-1 pruning of {table!r} ran past its time in the catalog and was"
                    " cancelled",
                    "query_timeout_seconds",
                ) from None
        return total, [ExtentRef(*r) for r in rows]

    def _check_snapshot(self, conn: psycopg.Connection, info: TableInfo, snapshot_id: int) -> None:
        row = conn.execute(
            "SELECT 1 FROM kyma.snapshots WHERE table_id = %s AND snapshot_id = %s",
            (info.table_id, snapshot_id),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"table {info.name!r} has no snapshot {snapshot_id}")

    def snapshots(self, table: str) -> list[SnapshotInfo]:
        info = self.get_table(table)
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT snapshot_id, parent_id, created_at, summary FROM kyma.snapshots"
                " WHERE table_id = %s ORDER BY snapshot_id",
                (info.table_id,),
            ).fetchall()
        return [SnapshotInfo(*r) for r in rows]

    def expire_snapshots(self, table: str, cutoff: datetime) -> tuple[int, int]:
        """Forget snapshots older than ``cutoff`` (not the current); (snapshots, extents)."""
        info = self.get_table(table)
        with self._conn() as conn:
            return _retention.expire(conn, info.table_id, cutoff)

    def referenced_objects(self) -> set[str]:
        """Object paths any manifest row (of any retained snapshot) or any CDC snapshot chunk
        not yet committed points at."""
        with self._conn() as conn:
            manifest = {p for (p,) in conn.execute("SELECT object_path FROM kyma.manifest")}
            return manifest | _cdc.chunk_objects(conn)

    # ------------------------------------------------------------ ingest ledger

    @contextmanager
    def idempotency_lock(self, key: str, wait_seconds: float = 30.0) -> Iterator[None]:
        """Hold ``key``'s lock for a request; a second holder waits, then gets 409-style."""
        with self._conn() as conn, _ledger.key_lock(conn, key, wait_seconds):
            yield

    def ledger_lookup(self, key: str) -> _ledger.LedgerEntry | None:
        with self._conn() as conn:
            return _ledger.lookup(conn, key)

    def sweep_ledger(self, older_than: timedelta = LEDGER_RETENTION) -> int:
        """Delete idempotency records older than ``older_than``; return how many."""
        with self._conn() as conn:
            cur = conn.execute(
                "DELETE FROM kyma.ingest_ledger WHERE created_at < now() - %s", (older_than,)
            )
        return cur.rowcount
