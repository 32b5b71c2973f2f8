"""Plain records the catalog returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

from kyma.engine.types import Column, arrow_schema


@dataclass(frozen=True)
class TableInfo:
    table_id: int
    name: str
    columns: tuple[Column, ...]
    current_snapshot_id: int | None
    created_at: datetime
    options: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per column added by typed schema evolution: where its values sit in the JSON."""

    @property
    def schema(self) -> pa.Schema:
        return arrow_schema(self.columns)

    @property
    def path_prefix(self) -> str:
        """Where this table's extents live in the object store."""
        return f"tables/{self.table_id}"

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass(frozen=True)
class ManifestEntry:
    extent_id: str
    object_path: str
    byte_size: int
    row_count: int
    block_count: int
    min_ts: int | None
    max_ts: int | None
    column_stats: dict[str, Any]
    present_paths: list[str]
    added_snapshot_id: int
    format: str = "tlm"
    """``parquet`` or ``tlm``: the SegmentFormat that wrote the extent."""
    deletes: bytes | None = None
    """The deletion vector: positions of deleted rows (``engine/deletes.py``), or None."""
    deleted_rows: int = 0

    @property
    def live_rows(self) -> int:
        return self.row_count - self.deleted_rows


@dataclass(frozen=True)
class ExtentRef:
    """What a scan needs of a manifest row."""

    extent_id: str
    object_path: str
    byte_size: int
    row_count: int
    block_count: int
    deletes: bytes | None = None
    """The deletion vector: positions of deleted rows (``engine/deletes.py``), or None."""
    deleted_rows: int = 0
    min_ts: int | None = None
    """The least and greatest ``_timestamp`` written in it (ns; None: unknown)."""
    max_ts: int | None = None

    @property
    def live_rows(self) -> int:
        return self.row_count - self.deleted_rows


@dataclass(frozen=True)
class DeletionVector:
    """Rows deleted from a live extent: its manifest row ``extent_id`` is replaced by a copy
    ``new_extent_id`` (same object) whose vector ``deletes`` holds ``deleted_rows`` positions,
    those deleted before included."""

    extent_id: str
    new_extent_id: str
    deletes: bytes
    deleted_rows: int


@dataclass(frozen=True)
class SnapshotInfo:
    snapshot_id: int
    parent_id: int | None
    created_at: datetime
    summary: dict[str, Any]


@dataclass(frozen=True)
class CommitResult:
    snapshot_id: int
    parent_id: int | None
    attempts: int


@dataclass(frozen=True)
class ViewInfo:
    """A view: its query as kyma's dialect writes it and its output columns.

    ``reads``: the tables and views its query names (DROP refuses to leave it dangling).
    A materialized view's ``query`` reads the table ``storage`` that holds its rows; it was
    created with the query ``definition`` over ``base``, whose snapshot ``base_snapshot``
    the rows are up to date with."""

    view_id: int
    name: str
    query: str
    schema: pa.Schema
    reads: tuple[str, ...]
    created_at: datetime
    definition: str | None = None
    storage: str | None = None
    base: str | None = None
    base_snapshot: int | None = None

    @property
    def materialized(self) -> bool:
        return self.definition is not None

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)
