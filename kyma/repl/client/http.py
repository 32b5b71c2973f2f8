"""The client of a running ``kyma serve``: ``POST /v1/query``, answers as Arrow IPC."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa

from kyma.repl.client import Answer, Client, QueryError

ARROW_STREAM = "application/vnd.apache.arrow.stream"
STATUS_HEADER = "X-Kyma-Status"  # the statement's status line, as kyma.server.query sends it


class HttpClient(Client):
    """One HTTP connection per statement, so ``cancel`` can close the one in flight.

    ``https`` URLs verify the server against the system's CAs, or ``cacert`` (a PEM file).
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 3600,
        *,
        cacert: Path | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise QueryError(f"--url: expected http://host:port, got {url!r}")
        self._url = url
        self._parts = parts
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": ARROW_STREAM}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._lock = threading.Lock()
        self._open: http.client.HTTPConnection | None = None
        self._tls: ssl.SSLContext | None = None
        if parts.scheme == "https":
            try:
                self._tls = ssl.create_default_context(cafile=cacert)
            except (OSError, ssl.SSLError) as e:
                raise QueryError(f"--cacert: cannot load {str(cacert)!r}: {e}") from e
        elif cacert is not None:
            raise QueryError("--cacert applies to an https:// --url")

    def execute(self, sql: str) -> Answer:
        connection = self._connect()
        try:
            connection.request("POST", self._path(), json.dumps({"sql": sql}), self._headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as e:
            raise QueryError(f"could not reach kyma at {self._url}: {e}") from e
        finally:
            with self._lock:
                self._open = None
            connection.close()
        if response.status >= 400:
            raise QueryError(_error_message(response.status, body))
        if ARROW_STREAM not in response.getheader("Content-Type", ""):
            raise QueryError(f"expected an Arrow IPC stream from {self._url}, got {body[:200]!r}")
        return Answer(pa.ipc.open_stream(body).read_all(), response.getheader(STATUS_HEADER))

    def progress(self, sql: str) -> dict[str, Any] | None:
        """The entry of GET /v1/queries for this caller's ``sql``, on a connection of its own."""
        connection = self._connection(timeout=2)
        try:
            connection.request("GET", self._base() + "/v1/queries", headers=self._headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            return None
        finally:
            connection.close()
        if response.status != 200:
            return None
        running = [q for q in json.loads(body).get("queries", []) if q.get("sql") == sql]
        return running[-1] if running else None

    def cancel(self) -> None:
        with self._lock:
            connection, self._open = self._open, None
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):  # already closed by the other side
                connection.sock.shutdown(socket.SHUT_RDWR)

    def _connect(self) -> http.client.HTTPConnection:
        connection = self._connection(self._timeout)
        with self._lock:
            self._open = connection
        return connection

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        host, port = self._parts.hostname or "", self._parts.port  # checked in __init__
        if self._tls is not None:
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self._tls)
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def _base(self) -> str:
        return self._parts.path.rstrip("/")

    def _path(self) -> str:
        return self._base() + "/v1/query"


def _error_message(status: int, body: bytes) -> str:
    try:
        answer = json.loads(body)
        return str(answer["message"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {status}: {body[:200].decode(errors='replace')}"
