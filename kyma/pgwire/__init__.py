"""kyma's Postgres wire protocol listener: psql, Postgres drivers and BI tools query kyma.

It runs in the ``kyma serve`` process beside the HTTP API and answers through the same
``Services`` (``query.execute``, with the caller's token scopes). The framing is written
here on the standard library: the protocol libraries for Python (riffq, buenavista) have no
wheel for this platform, or no token auth and no SQLSTATEs. One thread per connection; one
not authenticated within KYMA_PG_AUTH_TIMEOUT_SECONDS is cut off (``_listener``).
"""

from __future__ import annotations

import socketserver
import ssl
import threading
from typing import TYPE_CHECKING

from kyma.engine.errors import ConfigError

if TYPE_CHECKING:
    from kyma.services import Services


class PgServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, services: Services, host: str, port: int, tls: ssl.SSLContext | None
    ) -> None:
        from kyma.pgwire._connection import Handler
        from kyma.pgwire._listener import Listener

        self.listener = Listener(services, tls)
        super().__init__((host, port), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True, name="pgwire")

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"postgresql://{host!s}:{port}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def start_pg_server(
    services: Services, host: str, port: int, tls: ssl.SSLContext | None = None
) -> PgServer:
    """A Postgres protocol listener on ``host:port``, serving in a thread; ``tls`` makes it
    accept (and require) SSLRequest. ConfigError when it cannot listen."""
    try:
        server = PgServer(services, host, port, tls)
    except OSError as e:
        raise ConfigError(f"KYMA_PG_PORT: cannot listen on {host}:{port} ({e.strerror})") from e
    server.thread.start()
    return server
