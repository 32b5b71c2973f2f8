"""How the REPL reaches kyma: one interface, an HTTP and an embedded implementation."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import pyarrow as pa


@dataclass
class Answer:
    """One statement's result: the rows, and the status word when the client knows it."""

    table: pa.Table
    status: str | None = None


class QueryError(Exception):
    """A statement failed; ``message`` is kyma's, ``line``/``column`` where it gave them."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        where = re.search(r"line (\d+), column (\d+)", message)
        self.line = int(where.group(1)) if where else None
        self.column = int(where.group(2)) if where else None


class Client(ABC):
    """Runs one SQL statement at a time against kyma."""

    @abstractmethod
    def execute(self, sql: str) -> Answer:
        """Run ``sql``; raise QueryError when kyma refuses it."""

    def progress(self, sql: str) -> dict[str, Any] | None:
        """How far the running ``sql`` is (``GET /v1/queries``'s entry), None when unknown
        (called from another thread while ``execute`` runs)."""
        return None

    def cancel(self) -> None:  # noqa: B027 - the embedded runtime can only abandon a query
        """Stop the running ``execute`` if the transport allows (called from another thread)."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release the connection or runtime."""
