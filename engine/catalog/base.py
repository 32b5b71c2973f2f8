"""The Catalog seam: tables, columns, snapshots, the extent manifest, pruning and commits.

``PostgresCatalog`` (``postgres.py``) implements it. State other layers keep in the catalog
database (connector records, CDC cursors, source positions, tokens, ...) lives in stores
owned by those layers, over the shared ``CatalogDatabase``; a commit carries their writes
as payloads that run in its transaction through the small ``Transaction`` protocol.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

import pyarrow as pa

from kyma.engine.catalog._model import (
    CommitResult,
    DeletionVector,
    ExtentRef,
    ManifestEntry,
    SnapshotInfo,
    TableInfo,
    ViewInfo,
)
from kyma.engine.errors import NotFoundError
from kyma.engine.format import ExtentWriteResult
from kyma.engine.format.predicate import BlockPredicate
from kyma.engine.types import Column

# Given a cancel function, a context that yields the seconds left (None: no deadline).
Watch = Callable[[Callable[[], None]], AbstractContextManager[float | None]]


class Rows(Protocol):
    """What a statement run in a transaction gives back."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Transaction(Protocol):
    """The open commit transaction, as payloads see it (a driver cursor has this shape)."""

    def execute(self, query: Any, params: Any = None, /) -> Rows: ...

    def executemany(self, query: Any, params_seq: Any, /) -> None: ...

    @property
    def rowcount(self) -> int:
        """Rows the last statement touched."""
        ...


Payload = Callable[[Transaction, int], None]
"""Runs inside the commit transaction with the new snapshot id; raise to abort."""


class Catalog(ABC):
    """Tables and their columns, snapshots, the extent manifest, and the CAS commit."""

    commit_listeners: list[Callable[[Any], None]]

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def ping(self, timeout: float = 30) -> None: ...

    # ------------------------------------------------------------ tables and columns

    @abstractmethod
    def create_table(
        self,
        name: str,
        columns: Sequence[Column],
        *,
        if_not_exists: bool = False,
        options: dict[str, Any] | None = None,
    ) -> TableInfo: ...

    def add_column(self, table: str, column: Column, *, if_not_exists: bool = False) -> TableInfo:
        """Widen a table by one nullable column (schema only widens)."""
        return self.add_columns(table, [column], if_not_exists=if_not_exists)

    @abstractmethod
    def add_columns(
        self,
        table: str,
        columns: Sequence[Column],
        *,
        if_not_exists: bool = False,
        origins: dict[str, dict[str, Any]] | None = None,
    ) -> TableInfo: ...

    @abstractmethod
    def set_table_options(self, table: str, options: dict[str, Any]) -> TableInfo: ...

    @abstractmethod
    def column_stats(self, table: str) -> dict[str, dict[str, Any]]: ...

    @abstractmethod
    def columns_added(self, table: str) -> dict[str, datetime]:
        """When each column of ``table`` was added (with the table, or by evolution)."""

    def drop_table(self, name: str, *, if_exists: bool = False) -> bool:
        """Drop a table no view reads; its objects become orphans that GC removes. True if
        it existed."""
        return self.drop_relations([name], "table", if_exists=if_exists) > 0

    @abstractmethod
    def drop_relations(
        self, names: Sequence[str], kind: str, *, if_exists: bool = False, cascade: bool = False
    ) -> int:
        """Drop tables, views or materialized views (``kind``) together, and with
        ``cascade`` the views that read them; how many of ``names`` existed."""

    @abstractmethod
    def get_table(self, name: str) -> TableInfo: ...

    def get_tables(self, names: Collection[str]) -> dict[str, TableInfo]:
        """The tables of ``names`` that exist, by name (a query's tables, read together)."""
        found = {}
        for name in names:
            try:
                found[name] = self.get_table(name)
            except NotFoundError:
                continue
        return found

    @abstractmethod
    def list_tables(self) -> list[TableInfo]: ...

    # ------------------------------------------------------------ views

    @abstractmethod
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
        """Store a view (``replace``: Postgres's CREATE OR REPLACE rule for its columns;
        ``materialized``: a materialized view's definition, storage and base)."""

    @abstractmethod
    def get_views(self, names: Collection[str]) -> dict[str, ViewInfo]:
        """The views of ``names`` that exist, by name."""

    @abstractmethod
    def list_views(self) -> list[ViewInfo]: ...

    def drop_views(self, names: Sequence[str], *, if_exists: bool = False) -> int:
        """Drop views together (one may read another); how many existed."""
        return self.drop_relations(names, "view", if_exists=if_exists)

    # ------------------------------------------------------------ snapshots and extents

    @abstractmethod
    def commit(
        self,
        table: str,
        added: Sequence[ExtentWriteResult],
        removed: Sequence[str] = (),
        *,
        summary: dict[str, Any] | None = None,
        payload: Payload | None = None,
        deletes: Sequence[DeletionVector] = (),
    ) -> CommitResult: ...

    @abstractmethod
    def truncate(self, tables: Sequence[str], summary: dict[str, Any]) -> None:
        """One new snapshot of each table holding none of its extents, committed together."""

    @abstractmethod
    def live_extents(self, table: str, snapshot_id: int | None = None) -> list[ManifestEntry]: ...

    @abstractmethod
    def prune_extents(
        self,
        table: str,
        snapshot_id: int | None,
        predicate: BlockPredicate | None,
        watch: Watch | None = None,
        info: TableInfo | None = None,
    ) -> tuple[int, list[ExtentRef]]: ...

    @abstractmethod
    def extents(self, table: str, extent_ids: Collection[str]) -> list[ExtentRef]:
        """The manifest rows of ``extent_ids`` (live or not), without their stats."""

    @abstractmethod
    def snapshots(self, table: str, last: int | None = None) -> list[SnapshotInfo]:
        """``table``'s snapshots, oldest first; with ``last``, only the newest ``last``."""

    @abstractmethod
    def expire_snapshots(self, table: str, cutoff: datetime) -> tuple[int, int]: ...

    @abstractmethod
    def referenced_objects(self) -> set[str]: ...

    @abstractmethod
    def retired_objects(self, table: str) -> set[str]:
        """Object paths of ``table``'s manifest rows that a commit removed (kept for the
        snapshots before it)."""
