"""A server on loopback that plays a hostile Postgres: it asks every client for its password
in clear text (AuthenticationCleartextPassword) and keeps every byte the clients send."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from types import TracebackType

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104
_CLEARTEXT_PASSWORD = struct.pack("!cii", b"R", 8, 3)


class FakePostgres:
    """``with FakePostgres() as fake``: ``fake.port`` to connect to, ``fake.received`` after."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._chunks: list[bytes] = []
        self.startups = 0  # clients that got as far as the startup message
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def received(self) -> bytes:
        with self._lock:
            return b"".join(self._chunks)

    def __enter__(self) -> FakePostgres:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._listener.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed by __exit__
                return
            with client:
                client.settimeout(2)
                with contextlib.suppress(OSError):  # the client gave up; what it sent is kept
                    self._handshake(client)

    def _handshake(self, client: socket.socket) -> None:
        while True:
            length, code = struct.unpack("!ii", self._read(client, 8))
            self._read(client, length - 8)
            if code in (_SSL_REQUEST, _GSSENC_REQUEST):
                client.sendall(b"N")  # no TLS, no GSS: the client goes on in clear text or quits
                continue
            with self._lock:
                self.startups += 1
            client.sendall(_CLEARTEXT_PASSWORD)
            while self._read(client, 1, keep_partial=True):  # whatever the client answers
                pass
            return

    def _read(self, client: socket.socket, n: int, *, keep_partial: bool = False) -> bytes:
        data = b""
        while len(data) < n:
            chunk = client.recv(n - len(data))
            if not chunk:
                if keep_partial:
                    return data
                raise OSError("client closed")
            with self._lock:
                self._chunks.append(chunk)
            data += chunk
        return data
