"""kyma's Arrow Flight SQL server: BI tools and ADBC/JDBC drivers query kyma over gRPC.

It runs in the ``kyma serve`` process beside the HTTP API and answers through the same
``Services`` (``query.execute`` for statements, the catalog and connectors for metadata).
Needs the ``flight`` extra; nothing in kyma imports this package unless serve starts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kyma.engine.errors import ConfigError, NotInstalledError

if TYPE_CHECKING:
    from kyma.flight._server import KymaFlightServer
    from kyma.services import Services


def start_flight_server(
    services: Services, host: str, port: int, tls: tuple[bytes, bytes] | None = None
) -> KymaFlightServer:
    """A Flight SQL server listening on ``host:port`` (0: any free port), serving threads;
    ``tls`` (PEM certificate chain, key) makes it ``grpc+tls``.

    NotInstalledError when the ``flight`` extra is missing; ConfigError when it cannot listen.
    """
    try:
        import google.protobuf  # noqa: F401
        import pyarrow.flight  # noqa: F401
    except ImportError as e:
        raise NotInstalledError("the Arrow Flight SQL server", "flight") from e
    import pyarrow as pa

    from kyma.flight._server import KymaFlightServer

    try:
        return KymaFlightServer(services, host, port, tls)
    except pa.ArrowException as e:  # gRPC says only "did not start": the port is taken, mostly
        raise ConfigError(f"KYMA_FLIGHT_PORT: cannot listen on {host}:{port} ({e})") from e
