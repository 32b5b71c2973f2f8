"""The ingest source seam: one abstract base per source type, one worker per running source.

A type parses its definitions (the JSON body of ``POST /v1/sources`` or the options of
``CREATE SOURCE … WITH (…)``), prepares the target table, runs a worker thread and reports
its status. Types are registered by name in ``kyma.ingest.source_types``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from kyma.ingest.source_metrics import SourceMetrics

if TYPE_CHECKING:
    from kyma.ingest.sources import SourceRegistry


class SourceWorker(ABC):
    """Runs one source until stopped; the registry reads its health from ``metrics``.

    ``last_error`` and ``degraded`` are kept in ``metrics`` (with when they were set); a
    worker counts its commits there with ``metrics.committed(rows)`` and sets ``lag``.
    """

    spec: Any  # the type's parsed definition (it has a ``name``)
    lag_unit: ClassVar[str] = "rows"  # what the worker's lag counts

    @property
    def metrics(self) -> SourceMetrics:
        found = self.__dict__.get("_metrics")
        if found is None:
            found = self.__dict__.setdefault("_metrics", SourceMetrics(self.lag_unit))
        return found  # type: ignore[no-any-return]

    @property
    def last_error(self) -> str | None:
        """The latest failure, if any."""
        return self.metrics.last_error

    @last_error.setter
    def last_error(self, message: str | None) -> None:
        self.metrics.error(message)

    @property
    def degraded(self) -> str | None:
        """Why it cannot work now (broker unreachable, folder gone), or None."""
        return self.metrics.degraded

    @degraded.setter
    def degraded(self, reason: str | None) -> None:
        self.metrics.degrade(reason)

    @abstractmethod
    def run(self, stop: threading.Event) -> None:
        """Ingest until ``stop`` is set."""


class Source(ABC):
    """One source type (stateless): what the registry asks of every type."""

    type_name: ClassVar[str]
    """The ``type`` of its definitions, e.g. ``kafka``."""

    def statement_body(self, body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        """The JSON body for ``CREATE SOURCE <name> TYPE <type> WITH (<options>)``, given
        the body's ``name`` and ``type``; by default the options are the body's fields."""
        return {**body, **options}

    @abstractmethod
    def parse(self, body: Any) -> Any:
        """The type's definition from a JSON body (ConfigError naming the field); it has
        ``name``, ``table`` and ``to_json()``."""

    @abstractmethod
    def prepare(self, spec: Any, sources: SourceRegistry) -> None:
        """Check what a new definition needs (ConfigError) and create or widen its table."""

    @abstractmethod
    def worker(self, spec: Any, sources: SourceRegistry) -> SourceWorker:
        """A worker for the definition (NotInstalledError without the type's extra)."""

    @abstractmethod
    def status(
        self, spec: Any, sources: SourceRegistry, worker: SourceWorker | None
    ) -> dict[str, Any]:
        """The type's part of the source's status (``worker``: this process's, if running)."""
