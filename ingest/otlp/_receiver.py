"""The OTLP receiver: gRPC and HTTP servers in front of one export path per signal.

An export's request, read on its own thread (spans and log records already an Arrow batch,
metrics a protobuf message), is handed to its table's group commit, which makes the group's
parts one batch on its committing thread; the export is answered once the snapshot holding
its rows is committed. The error an export ends with decides its status
on either protocol (``_status``): bad input is not retried, a failed commit is.
"""

from __future__ import annotations

import threading
from typing import Any

from kyma.engine.catalog import Catalog
from kyma.engine.errors import RetryableError
from kyma.ingest.write_path import WritePath

from ._batcher import GroupCommit
from ._grpc import start_grpc_server
from ._http import start_http_server
from ._options import OtlpOptions
from ._signals import SIGNALS, Signal
from ._tables import prepare_table
from ._values import Outcome

COMMIT_WAIT_SECONDS = 60.0


class OtlpReceiver:
    """Exports of logs, traces and metrics into their tables; ``start`` opens both servers."""

    def __init__(self, catalog: Catalog, write_path: WritePath, options: OtlpOptions) -> None:
        self.catalog = catalog
        self.options = options
        self._commits = {
            name: GroupCommit(
                write_path,
                options.tables[name],
                max_rows=options.batch_rows,
                max_bytes=options.batch_bytes,
                max_latency=options.batch_latency_ms / 1000,
                assemble=signal.assemble,
            )
            for name, signal in SIGNALS.items()
        }
        self._prepared: set[str] = set()
        self._preparing = threading.Lock()
        self._servers: list[Any] = []
        self.grpc_url = self.http_url = ""

    def authorize(self, signal: Signal, authorization: str | None) -> None:
        """UnauthenticatedError or PermissionDeniedError when the caller may not export."""
        if self.options.authorize is not None:
            self.options.authorize(authorization, self.options.tables[signal.name])

    def export(self, signal: Signal, part: Any, size: int) -> Any:
        """Store one read Export request (``signal.read``; ``size``: its body's bytes); its
        response once the rows are committed. IngestError when its records cannot be stored."""
        records = signal.count(part)
        if not records:
            return signal.answer(Outcome())
        self._prepare(signal)
        try:
            outcome = self._commits[signal.name].submit(
                part, COMMIT_WAIT_SECONDS, rows=records, nbytes=size
            )
        except RetryableError:
            self._prepared.discard(signal.name)  # the table may have been dropped
            raise
        return signal.answer(outcome)

    def _prepare(self, signal: Signal) -> None:
        if signal.name in self._prepared:
            return
        with self._preparing:
            if signal.name not in self._prepared:
                prepare_table(self.catalog, self.options.tables[signal.name], signal.columns)
                self._prepared.add(signal.name)

    def metrics(self) -> list[tuple[str, str, dict[str, Any]]]:
        """Each signal's group commit as a source for ``/metrics``: ``otlp-<signal>``."""
        return [(f"otlp-{name}", "otlp", c.metrics.snapshot()) for name, c in self._commits.items()]

    def start(self) -> None:
        """Listen for OTLP/gRPC and OTLP/HTTP; ConfigError when a port is taken."""
        try:
            grpc_server = start_grpc_server(self, self.options)
            self._servers.append(grpc_server)
            http_server = start_http_server(self, self.options)
            self._servers.append(http_server)
        except BaseException:
            self.stop()
            raise
        tls = self.options.tls is not None
        self.grpc_url = f"{'grpc+tls' if tls else 'grpc'}://{self.options.host}:{grpc_server.port}"
        self.http_url = f"{'https' if tls else 'http'}://{self.options.host}:{http_server.port}"

    def stop(self) -> None:
        """Stop listening, let running exports finish, commit what is pending."""
        for server in reversed(self._servers):
            server.stop()
        for commit in self._commits.values():
            commit.close()
