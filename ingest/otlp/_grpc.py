"""OTLP/gRPC: the LogsService, TraceService and MetricsService ``Export`` methods.

Requests arrive as bytes and are decoded here (spans and log records straight into Arrow
columns), so a malformed one answers INVALID_ARGUMENT (grpcio's own decoding would answer
INTERNAL).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import grpc

from kyma.engine.errors import ConfigError
from kyma.ingest.tls import read_pair

from ._signals import SIGNALS, Signal
from ._status import status_of

if TYPE_CHECKING:
    from ._options import OtlpOptions
    from ._receiver import OtlpReceiver

log = logging.getLogger("kyma.ingest.otlp")
STOP_GRACE_SECONDS = 10.0


class GrpcServer:
    def __init__(self, server: grpc.Server, port: int) -> None:
        self._server = server
        self.port = port

    def stop(self) -> None:
        """Refuse new exports; wait for the running ones (up to STOP_GRACE_SECONDS)."""
        self._server.stop(STOP_GRACE_SECONDS).wait()


def start_grpc_server(receiver: OtlpReceiver, options: OtlpOptions) -> GrpcServer:
    server = grpc.server(
        ThreadPoolExecutor(options.threads, thread_name_prefix="otlp-grpc"),
        options=[
            ("grpc.max_receive_message_length", options.max_body_bytes),
            ("grpc.so_reuseport", 0),  # a taken port is an error, not a shared one
        ],
    )
    for signal in SIGNALS.values():
        export = grpc.unary_unary_rpc_method_handler(
            _exporter(receiver, signal), response_serializer=signal.response.SerializeToString
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(signal.grpc_service, {"Export": export}),)
        )
    address = f"{options.host}:{options.grpc_port}"
    try:
        if options.tls is None:
            port = server.add_insecure_port(address)
        else:
            chain, key = read_pair(*options.tls)
            port = server.add_secure_port(address, grpc.ssl_server_credentials([(key, chain)]))
    except RuntimeError as e:
        raise ConfigError(f"KYMA_OTLP_GRPC_PORT: cannot listen on {address} ({e})") from e
    server.start()
    return GrpcServer(server, port)


def _exporter(receiver: OtlpReceiver, signal: Signal) -> Callable[[bytes, Any], Any]:
    def export(body: bytes, context: grpc.ServicerContext) -> Any:
        try:
            metadata = dict(context.invocation_metadata())
            receiver.authorize(signal, metadata.get("authorization"))
            return receiver.export(signal, signal.read(body), len(body))
        except Exception as e:
            code, _ = status_of(e)
            if code is grpc.StatusCode.INTERNAL:
                log.exception("OTLP/gRPC %s export failed", signal.name)
            context.abort(code, str(e))

    return export
