"""A WSGI app served by waitress on a thread of its own (the HTTP API and OTLP/HTTP).

On its own thread the server needs no signal to stop: ``stop()`` closes the listening socket,
lets running requests finish and ends the loop, whichever thread the process is in.

Health probes (``probes``: ``GET /healthz``…) run on a worker thread of their own: waitress
queues requests while all its threads are busy, and wide ingest bodies on every thread kept
``/healthz`` waiting for minutes (issue 25).
"""

from __future__ import annotations

import errno
import socket
import threading
from typing import Any

from waitress import wasyncore
from waitress.server import create_server
from waitress.task import ThreadedTaskDispatcher

from kyma.engine.errors import ConfigError
from kyma.ingest.tls import serve_tls, server_context

STOP_GRACE_SECONDS = 10.0
# waitress reads a socket 8 KiB at a time on its one loop thread and spools a body past
# 512 KiB to a temporary file: a 10 000-line ingest body (~2.6 MB) cost ~330 reads and a
# file round trip, ~17 ms of server CPU a request (BENCHMARKS.md, issue 18). Larger reads,
# and bodies up to 4 MiB kept in memory (the handler reads the whole body anyway).
RECV_BYTES = 256 << 10
INBUF_OVERFLOW = 4 << 20


class HttpListener:
    """``app`` listening on ``(host, port)``; ``setting`` names the port's setting in errors."""

    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        *,
        setting: str,
        threads: int,
        tls: tuple[Any, Any] | None = None,
        name: str = "http",
        probes: frozenset[str] = frozenset(),
    ) -> None:
        try:  # bound here: waitress leaks its sockets when binding fails
            listening = socket.create_server((host, port))
        except OSError as e:
            raise ConfigError(
                f"{setting}: cannot listen on {host}:{port} ({e.strerror or e});"
                f" set {setting} to a free port (0: any free port)"
            ) from e
        # A lookahead keeps reading while a request runs, so a client that went away is
        # seen: ``environ["waitress.client_disconnected"]()`` turns true (its query stops).
        self._server: Any = create_server(
            app,
            sockets=[listening],
            threads=threads,
            channel_request_lookahead=1,
            recv_bytes=RECV_BYTES,
            inbuf_overflow=INBUF_OVERFLOW,
        )
        self._probes = _probes_apart(self._server, probes) if probes else None
        if tls is not None:
            serve_tls(self._server, server_context(*tls))
        self.port: int = self._server.effective_port
        self._thread = threading.Thread(target=self._server.run, daemon=True, name=name)
        self._thread.start()

    def stop(self) -> None:
        """Refuse new connections; wait for running requests (up to STOP_GRACE_SECONDS)."""
        server = self._server
        _on_loop(server, lambda: wasyncore.dispatcher.close(server))
        server.task_dispatcher.shutdown(cancel_pending=False, timeout=STOP_GRACE_SECONDS)
        if self._probes is not None:
            self._probes.shutdown(cancel_pending=True, timeout=1)
        _on_loop(server, lambda: wasyncore.close_all(server._map))
        self._thread.join(STOP_GRACE_SECONDS)


def _probes_apart(server: Any, paths: frozenset[str]) -> ThreadedTaskDispatcher:
    """Route a channel whose next request is ``GET``/``HEAD`` of one of ``paths`` to a
    dispatcher of one thread of its own; every other request to waitress's workers."""
    probes = ThreadedTaskDispatcher()
    probes.set_thread_count(1)
    workers = server.add_task

    def add_task(channel: Any) -> None:
        request = channel.requests[0] if getattr(channel, "requests", None) else None
        if request is not None and request.command in ("GET", "HEAD") and request.path in paths:
            probes.add_task(channel)
        else:
            workers(channel)

    server.add_task = add_task  # the channels call server.add_task(self)
    return probes


def _on_loop(server: Any, work: Any) -> None:
    """Run ``work`` on the server loop's thread. A loop that already ended (its last channel
    closed) has closed its trigger too: there is nothing left to close then."""
    try:
        server.trigger.pull_trigger(work)
    except OSError as e:
        if e.errno != errno.EBADF:
            raise
