"""The connector seam: one abstract base every source type implements.

A connector owns its connection pool, its schema introspection and its status; the shared
PushdownPlanner decides what it runs, from its Capabilities.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlglot import exp

from kyma.connectors.capabilities import Capabilities
from kyma.connectors.spec import ConnectorSpec
from kyma.engine.types import Column


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
