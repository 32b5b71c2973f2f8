"""A pushed scan: one SQL statement run at one source, and what it reports."""

from __future__ import annotations

import logging
import time
from typing import Any

import pyarrow as pa

from kyma.connectors.base import Connector, SourceColumn
from kyma.engine.errors import PushdownFailedError
from kyma.engine.query.federation import FederatedScan

log = logging.getLogger("kyma.connectors")

ORDINAL = "__kyma_ord"  # the source's row order, for a residual ORDER BY to keep


class PushedScan(FederatedScan):
    """``sql`` runs at ``connector``; its answer is registered in DataFusion as ``name``.

    With ``ordinal`` the answer gains a column numbering rows in the order the source sent
    them, so a residual sort reproduces the source's ORDER BY (its collation, its NULLs).
    """

    def __init__(
        self,
        name: str,
        connector: Connector,
        sql: str,
        *,
        tables: list[str],
        pushed: dict[str, Any],
        residual: list[dict[str, str]],
        columns: dict[str, SourceColumn],
        ordinal: bool = False,
    ) -> None:
        self.name = name
        self.connector = connector
        self.sql = sql
        self.tables = tables
        self.pushed = pushed
        self.residual = residual
        self.columns = columns
        self.ordinal = ordinal
        self._answer: pa.Table | None = None
        self._bytes = 0
        self._elapsed_ms = 0.0

    def fetch(self) -> pa.Table:
        if self._answer is None:
            started = time.perf_counter()
            try:
                fetched = self.connector.fetch(self.sql, self.columns)
            except PushdownFailedError as e:
                log.error(
                    "pushdown failed: %s; pushed SQL: %s; residual: %s", e, self.sql, self.residual
                )
                raise
            table = fetched.table
            if self.ordinal:
                table = table.append_column(ORDINAL, pa.array(range(table.num_rows), pa.int64()))
            self._answer, self._bytes = table, fetched.bytes_fetched
            self._elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
        return self._answer

    def summary(self) -> dict[str, Any]:
        fetched = self._answer is not None
        return {
            "scan": self.name,
            "connector": self.connector.name,
            "source": self.connector.redacted_source,
            "tables": self.tables,
            "sql": self.sql,
            "pushed": self.pushed,
            "residual": self.residual,
            "rows_fetched": self._answer.num_rows if fetched else None,  # type: ignore[union-attr]
            "bytes_fetched": self._bytes if fetched else None,
            "elapsed_ms": self._elapsed_ms if fetched else None,
        }
