"""What the OTLP receiver is told: where it listens, which tables, how it groups commits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class OtlpOptions:
    host: str = "127.0.0.1"
    grpc_port: int = 4317  # 0: any free port
    http_port: int = 4318  # 0: any free port
    tables: dict[str, str] = field(
        default_factory=lambda: {
            "logs": "otel_logs",
            "traces": "otel_traces",
            "metrics": "otel_metrics",
        }
    )
    # A group commit goes when no other commit of its table is in progress (_batcher) and
    batch_rows: int = 50_000  # takes at most this many rows
    batch_bytes: int = 64 << 20  # and bytes of export bodies (a full one goes at once);
    batch_latency_ms: int = 20  # past this wait behind a commit, it goes beside that one
    max_body_bytes: int = 64 << 20
    threads: int = 8  # exports served at once, per protocol
    # Called with an export's Authorization header and its table before it is stored;
    # raises UnauthenticatedError or PermissionDeniedError to refuse it. None: anyone.
    authorize: Callable[[str | None, str], None] | None = None
    tls: tuple[Path, Path] | None = None  # PEM certificate chain and key files: TLS only
