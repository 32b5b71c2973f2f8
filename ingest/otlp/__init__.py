"""OTLP ingest: logs, traces and metrics over OTLP/gRPC and OTLP/HTTP into three tables.

Needs the ``otlp`` extra (grpcio, opentelemetry-proto, googleapis-common-protos); nothing
imports it until ``start_otlp_receiver`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kyma.engine.errors import NotInstalledError
from kyma.ingest.otlp._options import OtlpOptions

if TYPE_CHECKING:
    from kyma.engine.catalog import Catalog
    from kyma.ingest.otlp._receiver import OtlpReceiver
    from kyma.ingest.write_path import WritePath

__all__ = ["OtlpOptions", "start_otlp_receiver"]


def start_otlp_receiver(
    catalog: Catalog, write_path: WritePath, options: OtlpOptions
) -> OtlpReceiver:
    """A started receiver (its ``grpc_url`` and ``http_url`` set); ``stop()`` it when done.

    NotInstalledError when the ``otlp`` extra is missing; ConfigError when a port is taken.
    """
    try:
        import grpc  # noqa: F401
        from google.rpc import status_pb2  # noqa: F401
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2  # noqa: F401
    except ImportError as e:
        raise NotInstalledError("the OTLP receiver", "otlp") from e
    from kyma.ingest.otlp._receiver import OtlpReceiver

    receiver = OtlpReceiver(catalog, write_path, options)
    receiver.start()
    return receiver
