"""What a statement answers: an Arrow table, a status line and stats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from kyma.engine.query._live import Live


@dataclass
class QueryResult:
    """``pushdown_summary`` has one entry per federated scan (empty when none ran);
    ``rowcount`` the rows a write changed (-1: not a write); ``warnings``: what the statement
    warned of (a Postgres WARNING, SQLSTATE 01000, sent before the rows). ``live``: the rows
    after ``table``'s, still being computed (``execute(stream=True)`` only; None: ``table`` is
    the whole answer)."""

    table: pa.Table
    status: str
    stats: dict[str, Any] = field(default_factory=dict)
    pushdown_summary: list[dict[str, Any]] = field(default_factory=list)
    rowcount: int = -1
    warnings: list[str] = field(default_factory=list)
    live: Live | None = None

    @classmethod
    def status_only(cls, status: str) -> QueryResult:
        return cls(pa.table({}), status)
