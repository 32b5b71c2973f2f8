"""The connector seam: one abstract base every source type implements.

A connector owns its connection pool, its schema introspection and its status; the shared
PushdownPlanner decides what it runs, from its Capabilities. A type that can keep kyma
tables in sync with its source (modes ``sync`` and ``both``) overrides the CDC hooks.
Types are registered by name in ``kyma.connectors.types``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from kyma.connectors.capabilities import Capabilities
from kyma.connectors.spec import ConnectorSpec
from kyma.engine.errors import ConfigError, KymaError, TerminalError
from kyma.engine.storage.config import StoreConfig
from kyma.engine.types import Column

if TYPE_CHECKING:
    from kyma.connectors.store import ConnectorRecord, ConnectorStore
    from kyma.engine.catalog import Catalog
    from kyma.ingest.write_path import WritePath


class SyncDisabled(TerminalError):
    """The connector must stop syncing: ``reason`` goes to ``disabled_reason``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (SyncDisabled, (self.reason, self.detail))


@dataclass(frozen=True)
class SparkTarget:
    """Where snapshot tasks run (``master``: None for KYMA_SPARK_MASTER or ``local[*]``) and
    where they write (kyma's object store, as a task opens it)."""

    store: StoreConfig
    block_rows: int = 131_072  # KYMA_BLOCK_ROWS
    master: str | None = None
    extent_format: str = "parquet"  # KYMA_EXTENT_FORMAT


class SyncWorker(ABC):
    """Keeps one connector's synced kyma tables up to date, in a thread of its own."""

    record: ConnectorRecord
    caught_up_at: float | None  # when it last had nothing left to apply

    @abstractmethod
    def run(self, stop: threading.Event) -> None:
        """Sync until ``stop``; retry what may pass; return when disabled or fenced."""

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """The worker's live state for the connector's status."""


@dataclass(frozen=True)
class SourceColumn:
    """A source column: its kyma column, and the connector's own description of its type."""

    column: Column
    source_type: Any

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def type_name(self) -> str:
        """The source's own spelling of the type, e.g. ``numeric(10,2)``."""
        return str(getattr(self.source_type, "name", self.source_type))


@dataclass(frozen=True)
class SourceTable:
    schema: str
    name: str
    columns: tuple[SourceColumn, ...]

    def column(self, name: str) -> SourceColumn | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass(frozen=True)
class Fetched:
    """An answer from a source, already in kyma's Arrow types, and its wire size."""

    table: pa.Table
    bytes_fetched: int


class Connector(ABC):
    """A live source registered as a catalog named ``name``."""

    name: str
    spec: ConnectorSpec  # the definition it was opened with
    dialect: str  # sqlglot dialect of the SQL pushed to the source
    capabilities: Capabilities

    def __init__(
        self,
        spec: ConnectorSpec,
        password: str | None,
        *,
        on_failure: Callable[[KymaError], None] = lambda _: None,
        on_success: Callable[[], None] = lambda: None,
    ) -> None:
        """How the registry opens every type: the definition, its resolved secret, and two
        callbacks: ``on_failure`` hears of every error (already translated), ``on_success``
        of every introspection or query that worked."""
        self.name = spec.name
        self.spec = spec
        self._on_failure = on_failure
        self._on_success = on_success

    @abstractmethod
    def table(self, schema: str, name: str) -> SourceTable:
        """One table in scope; introspects again once before NotFoundError."""

    @abstractmethod
    def tables(self, *, refresh: bool = False) -> list[SourceTable]:
        """Every table in scope (cached; ``refresh`` introspects the source again)."""

    @abstractmethod
    def output_expression(
        self, column: exp.Expression, source: SourceColumn, alias: str
    ) -> exp.Expression:
        """What to select so that ``column`` arrives in a form kyma converts exactly."""

    def pattern_operand(self, column: exp.Expression, source: SourceColumn) -> exp.Expression:
        """What LIKE in kyma must match for ``column``, as the source would (by default the
        fetched value itself)."""
        return column

    def compared_literal(self, source: SourceColumn, literal: str) -> str:
        """A string literal compared with ``source`` in kyma, as the source would compare it
        with the fetched value (by default as written)."""
        return literal

    def text_order(self, source: SourceColumn) -> str | None:
        """The collation under which the source orders ``source``, when that differs from
        kyma's byte order; None when they agree (the default)."""
        return None

    @abstractmethod
    def fetch(self, sql: str, columns: Mapping[str, SourceColumn]) -> Fetched:
        """Run one query at the source. ``columns`` maps output names that are plain source
        columns to them, for conversions the answer's own types cannot tell (vectors)."""

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """Pool use, tables seen, and other live counters of this process."""

    @abstractmethod
    def close(self) -> None:
        """Close every pooled connection."""

    @property
    @abstractmethod
    def redacted_source(self) -> str:
        """Where the source is, with credentials and host hidden (for summaries and logs)."""

    def redact(self, text: str) -> str:
        """``text`` (e.g. a driver's error message) with this connector's secrets hidden."""
        return text

    # ---------------------------------------------------------------- CDC hooks

    @classmethod
    def resnapshots_after(cls, disabled_reason: str | None) -> bool:
        """Whether enabling a sync connector disabled for ``disabled_reason`` must snapshot
        its tables again (its change log position is lost). Never, by default."""
        return False

    def prepare_sync(
        self, record: ConnectorRecord, catalog: Catalog, records: ConnectorStore, cdc: Any
    ) -> None:
        """Check the tables to sync (SyncDisabled if one cannot), create their kyma tables
        and whatever the source needs to publish changes (``cdc``: the type's sync state)."""
        raise ConfigError(f"mode: connector type {self.spec.type!r} cannot sync")

    def sync_worker(
        self,
        record: ConnectorRecord,
        catalog: Catalog,
        records: ConnectorStore,
        cdc: Any,
        write_path: WritePath,
        query: Callable[[str], pa.Table],
        *,
        on_disabled: Callable[[str, str], None],
        spark: SparkTarget | None = None,
    ) -> SyncWorker:
        """The worker that keeps ``record``'s tables in sync (``spark``: where large
        snapshots run, if anywhere)."""
        raise ConfigError(f"mode: connector type {self.spec.type!r} cannot sync")

    def release_sync(self, connector_id: int, *, publication: bool) -> None:
        """Drop what syncing holds at the source (a slot holds its WAL; ``publication``
        too when the connector goes). Nothing by default."""
        return None

    def sync_lag_bytes(self, confirmed: int) -> int | None:
        """How far the source is past ``confirmed`` (a position of its change log), in
        bytes; None when it cannot tell (the default)."""
        return None
