"""TLS for kyma's waitress servers (the HTTP API and OTLP/HTTP).

waitress has no TLS. Wrapping the listening socket in an ``SSLContext`` would run each
handshake inside ``accept`` on waitress's one event-loop thread, where a client that opens a
connection and sends nothing stalls every other client, and waitress's plain-socket reads
would treat a partly received TLS record (``SSLWantReadError``) as a broken connection.
Instead each accepted connection is wrapped without a handshake and its channel drives the
handshake, reads and writes non-blocking in waitress's own loop: a stalled handshake holds no
thread and is closed by waitress's idle-channel timeout like any idle connection.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from pathlib import Path
from typing import Any

from waitress.channel import HTTPChannel

from kyma.engine.errors import ConfigError

log = logging.getLogger("kyma.tls")


def server_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A server context for the PEM certificate chain and key: TLS 1.2+, no renegotiation."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_RENEGOTIATION
    try:
        context.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(
            f"KYMA_TLS_CERT_FILE/KYMA_TLS_KEY_FILE: cannot load {str(cert_file)!r}"
            f" and {str(key_file)!r}: {e}"
        ) from e
    return context


def read_pair(cert_file: Path, key_file: Path) -> tuple[bytes, bytes]:
    """The PEM bytes of the certificate chain and key, for gRPC servers."""
    server_context(cert_file, key_file)  # the same check, the same error
    return cert_file.read_bytes(), key_file.read_bytes()


def serve_tls(server: Any, context: ssl.SSLContext) -> None:
    """Make a waitress server (from ``create_server``, before ``run``) speak TLS only."""

    def channel(server: Any, conn: socket.socket, addr: Any, adj: Any, map: Any = None) -> Any:
        try:
            tls = context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
            return TlsChannel(server, tls, addr, adj, map=map)
        except OSError as e:  # the peer left already; the listener must not see an error
            log.debug("TLS connection from %s dropped: %s", addr, e)
            conn.close()
            return None

    server.channel_class = channel


class TlsChannel(HTTPChannel):
    """An HTTP channel on a non-blocking ``SSLSocket`` whose handshake is still to come."""

    handshaken = False
    _handshake_wants_write = False

    def readable(self) -> bool:
        return not self.handshaken or super().readable()

    def writable(self) -> bool:
        if not self.handshaken:
            return self._handshake_wants_write
        # Decrypted bytes OpenSSL holds make no poll event: come back through handle_write.
        return bool(super().writable()) or self._buffered()

    def handle_read(self) -> None:
        if not self.handshaken:
            self._handshake()
            return
        while True:
            try:
                data = self.socket.recv(self.adj.recv_bytes)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return  # a partial TLS record: wait for the rest
            except OSError as e:  # SSLError too: a broken or hostile peer
                log.debug("TLS connection from %s closed: %s", self.addr, e)
                self.handle_close()
                return
            if not data:
                self.handle_close()
                return
            self.last_activity = time.time()
            self.received(data)
            if not (self.connected and self._buffered()):
                return

    def handle_write(self) -> None:
        if not self.handshaken:
            self._handshake()
            return
        if self._buffered():
            self.handle_read()
        if super().writable():
            super().handle_write()

    def send(self, data: bytes, do_close: bool = True) -> int:
        try:
            return self.socket.send(data)
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return 0  # waitress sends the same bytes again, as TLS requires
        except OSError:
            if do_close:
                self.handle_close()
            return 0

    def _buffered(self) -> bool:
        return (
            self.handshaken
            and self.connected
            and self.socket is not None
            and self.socket.pending() > 0
            and bool(super().readable())
        )

    def _handshake(self) -> None:
        try:
            self.socket.do_handshake()
        except ssl.SSLWantReadError:
            self._handshake_wants_write = False
            return
        except ssl.SSLWantWriteError:
            self._handshake_wants_write = True
            return
        except OSError as e:  # a client that does not trust us, or speaks plain HTTP
            log.debug("TLS handshake with %s failed: %s", self.addr, e)
            self.handle_close()
            return
        self.handshaken = True
        self.last_activity = time.time()
