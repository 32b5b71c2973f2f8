"""What a statement answers: an Arrow table, a status line and stats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa


@dataclass
class QueryResult:
    table: pa.Table
    status: str
    stats: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def status_only(cls, status: str) -> QueryResult:
        return cls(pa.table({}), status)
