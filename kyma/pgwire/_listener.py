"""What the Postgres listener's connections share: the cancel keys, the connection slots
(authenticated, and not yet authenticated), the deadlines that cut a connection off, and
the limits from settings.

A socket takes an unauthenticated slot when it is accepted and must authenticate before
``auth_timeout`` (its thread then ends): a crowd of sockets that never send a password
cannot take the slots of real users, nor keep threads past the timeout.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kyma.auth import Authenticator
from kyma.engine.errors import ConfigError
from kyma.pgwire import _messages as m
from kyma.pgwire._backends import Backend, Backends

if TYPE_CHECKING:
    from kyma.auth import Principal
    from kyma.pgwire._connection import Connection
    from kyma.pgwire._session import Session
    from kyma.services import Services
    from kyma.settings import Settings


class Cancellable(Protocol):
    cancel: threading.Event


class CancelKeys:
    """The (process id, secret) each connection was given, to find it from a CancelRequest."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: dict[tuple[int, int], Cancellable] = {}

    def add(self, key: tuple[int, int], connection: Cancellable) -> None:
        with self._lock:
            self._connections[key] = connection

    def remove(self, key: tuple[int, int]) -> None:
        with self._lock:
            self._connections.pop(key, None)

    def cancel(self, key: tuple[int, int]) -> None:
        """Cancel the statement the connection with ``key`` runs (a wrong key: nothing)."""
        with self._lock:
            connection = self._connections.get(key)
        if connection is not None:
            connection.cancel.set()


class Slots:
    """At most ``limit`` holders at once (0: no limit); ``setting`` names the limit."""

    def __init__(self, limit: int, setting: str) -> None:
        if limit < 0:
            raise ConfigError(f"{setting}: expected 0 (no limit) or more: {limit}")
        self.limit, self.setting = limit, setting
        self._free = threading.BoundedSemaphore(limit) if limit > 0 else None

    def take(self) -> bool:
        return self._free is None or self._free.acquire(blocking=False)

    def give_back(self) -> None:
        if self._free is not None:
            self._free.release()

    def refusal(self) -> bytes:
        """The FATAL error a connection over the limit hears."""
        return m.error_response(
            "53300",
            f"too many Postgres protocol connections: {self.limit} are open ({self.setting})",
            "FATAL",
        )


class Deadlines:
    """One thread that cuts sockets off at their deadline: it shuts the socket's reading
    half, so the connection's blocked read ends (EOF) and it tells the client why."""

    def __init__(self) -> None:
        self._due: dict[object, tuple[float, int]] = {}
        self._woken = threading.Condition()
        self._thread: threading.Thread | None = None
        self.expired: set[object] = set()

    def arm(self, owner: object, fd: int, seconds: float) -> None:
        """Cut the socket of file descriptor ``fd`` in ``seconds`` unless ``owner`` disarms
        first (and before it closes the socket)."""
        with self._woken:
            self._due[owner] = (time.monotonic() + seconds, fd)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._watch, daemon=True, name="pgwire-deadlines"
                )
                self._thread.start()
            self._woken.notify()

    def disarm(self, owner: object) -> bool:
        """Stop watching; False if the deadline had passed (the socket was cut)."""
        with self._woken:
            self._due.pop(owner, None)
            if owner in self.expired:
                self.expired.discard(owner)
                return False
            return True

    def _watch(self) -> None:
        with self._woken:
            while True:
                now = time.monotonic()
                for owner, (deadline, fd) in list(self._due.items()):
                    if deadline <= now:
                        del self._due[owner]
                        self.expired.add(owner)
                        _cut(fd)
                soonest = min((d for d, _ in self._due.values()), default=None)
                self._woken.wait(None if soonest is None else max(0.0, soonest - now))


def _cut(fd: int) -> None:
    """Shut the reading half of the connection on ``fd``, through a duplicate: whichever
    object holds it (a TLS socket mid-handshake, whose own shutdown would unwrap it)."""
    with contextlib.suppress(OSError):  # closed meanwhile
        duplicate = socket.socket(fileno=os.dup(fd))
        try:
            duplicate.shutdown(socket.SHUT_RD)
        finally:
            duplicate.close()


@dataclass(frozen=True)
class Limits:
    """The listener's settings, per connection: seconds (0: none) and counts."""

    auth_timeout: float
    idle_session_timeout: float
    idle_in_transaction_timeout: float
    max_portals: int
    max_portal_bytes: int

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        values = {
            "KYMA_PG_AUTH_TIMEOUT_SECONDS": settings.pg_auth_timeout_seconds,
            "KYMA_PG_IDLE_SESSION_TIMEOUT_SECONDS": settings.pg_idle_session_timeout_seconds,
            "KYMA_PG_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS": (
                settings.pg_idle_in_transaction_timeout_seconds
            ),
            "KYMA_PG_MAX_PORTALS": settings.pg_max_portals,
            "KYMA_PG_MAX_PORTAL_BYTES": settings.pg_max_portal_bytes,
        }
        for name, value in values.items():
            if value < 0:
                raise ConfigError(f"{name}: expected 0 (none) or more: {value}")
        return cls(*values.values())


class Listener:
    """The parts every connection of one listener uses."""

    def __init__(self, services: Services, tls: ssl.SSLContext | None) -> None:
        settings = services.settings
        self.services, self.tls = services, tls
        self.authenticator = Authenticator(services.stores.tokens, settings.auth)
        self.cancels = CancelKeys()
        self.slots = Slots(settings.pg_max_connections, "KYMA_PG_MAX_CONNECTIONS")
        self.unauthenticated = Slots(settings.pg_max_unauthenticated, "KYMA_PG_MAX_UNAUTHENTICATED")
        self.deadlines = Deadlines()
        self.limits = Limits.of(settings)
        self.backends: Backends = services.backends

    def backend(self, connection: Connection, principal: Principal, session: Session) -> Backend:
        """The authenticated ``connection`` listed in pg_stat_activity under its session's pid."""
        fd, peer = connection.sock.fileno(), connection.sock.getpeername()
        backend = Backend(
            principal.caller("pgwire", session.pid),
            session,
            (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else None,
            lambda: _cut(fd),
        )
        self.backends.open(backend)
        return backend
