"""The federation seam: how sources outside kyma's own tables plug into a query.

A connector registers as a catalog. The engine hands every SELECT that names one of
its tables (``pg_prod.public.users`` or ``live(pg_prod.public.users)``) to a
``Federation``, which splits it into scans that run at the sources and a residual
statement that DataFusion runs over their answers. The engine knows nothing of any
source's protocol or dialect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from kyma.engine.query._result import QueryResult


class FederatedScan(ABC):
    """One query sent to one source; its answer is registered under ``name``."""

    name: str

    @abstractmethod
    def fetch(self) -> pa.Table:
        """Run at the source; the answer in kyma's Arrow types."""

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The pushdown_summary entry: pushed SQL, what was pushed, residuals, counters."""


@dataclass
class FederatedPlan:
    """``statement`` reads the scans' answers by their names; ``whole`` is set when the
    statement is nothing but one scan, whose rows (in their order) are the answer."""

    statement: exp.Query
    scans: list[FederatedScan] = field(default_factory=list)
    whole: FederatedScan | None = None


class Federation(ABC):
    """Connectors as catalogs, and their statements (CREATE CONNECTOR, SHOW CONNECTORS…)."""

    @abstractmethod
    def plan(
        self, stmt: exp.Query, local_tables: dict[str, dict[str, str]], *, pushdown: bool
    ) -> FederatedPlan:
        """Split ``stmt`` (already rewritten by kyma's rules) into scans and a residual.

        ``local_tables`` maps each kyma table the statement names to ``{column: SQL type}``.
        ``pushdown=False`` pushes projections only (a diagnostic and a benchmark baseline).
        """

    @abstractmethod
    def statement(self, stmt: exp.Expression) -> QueryResult | None:
        """Run a connector statement (parsed by kyma's dialect), or None when ``stmt`` is
        not one."""

    @abstractmethod
    def describe_table(self, catalog: str, schema: str, name: str) -> QueryResult:
        """``DESCRIBE catalog.schema.name``: a source table's columns, kyma and source types."""

    def resolve_synced(self, stmt: exp.Expression) -> exp.Expression:
        """``stmt`` with references to source tables that kyma syncs (CDC) renamed to their
        kyma tables; ``live(...)`` references stay at the source. None by default."""
        return stmt

    def change_log_of(self, name: str) -> str | None:
        """The synced kyma table whose change log the name ``name`` reads, or None."""
        return None


def references_sources(stmt: exp.Expression) -> bool:
    """Whether a statement names a catalog-qualified table or calls ``live(...)``."""
    return any(table.args.get("catalog") or is_live(table) for table in stmt.find_all(exp.Table))


def is_live(table: exp.Table) -> bool:
    """``live(catalog.schema.table)`` in a FROM clause."""
    fn = table.this
    return isinstance(fn, exp.Anonymous) and str(fn.this).lower() == "live"
