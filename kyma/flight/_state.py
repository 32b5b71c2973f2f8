"""What the Flight SQL server keeps between calls: results awaiting DoGet, and prepared
statements with their bound parameters. Both are bounded and expire.

A statement runs once, at GetFlightInfo: kyma cannot tell a result's schema without running
the query, and FlightInfo must carry it. The result waits here under its ticket until the
client's DoGet takes it (clients call DoGet right after), or until it expires.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa

from kyma.engine.errors import NotFoundError


class ResultCache:
    """Tables by ticket id: at most ``max_entries`` and ``max_bytes``, each for ``ttl`` s."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 2 << 30, ttl: float = 300) -> None:
        self.max_entries, self.max_bytes, self.ttl = max_entries, max_bytes, ttl
        self._entries: OrderedDict[bytes, tuple[float, pa.Table]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, table: pa.Table) -> bytes:
        """Keep ``table``; its ticket id. Older results make room (the newest always stays)."""
        key = uuid.uuid4().bytes
        with self._lock:
            self._entries[key] = (time.monotonic() + self.ttl, table)
            self._bytes += table.nbytes
            now = time.monotonic()
            while len(self._entries) > 1:
                oldest, (expires, old) = next(iter(self._entries.items()))
                full = len(self._entries) > self.max_entries or self._bytes > self.max_bytes
                if not full and expires > now:
                    break
                del self._entries[oldest]
                self._bytes -= old.nbytes
        return key

    def take(self, key: bytes) -> pa.Table:
        """The result under ``key``, forgotten on the way out; NotFoundError if gone."""
        with self._lock:
            expires, table = self._entries.pop(key, (0.0, None))
            if table is not None:
                self._bytes -= table.nbytes
        if table is None or expires < time.monotonic():
            raise NotFoundError("result not found: already fetched or expired; run it again")
        return table


@dataclass
class Prepared:
    sql: str
    parameters: pa.Table | None = None
    last_used: float = 0.0


class PreparedStatements:
    """Prepared statements by handle; the least recently used go beyond ``max_entries``,
    and any left unused for ``ttl`` seconds (clients that never close them)."""

    def __init__(self, max_entries: int = 1024, ttl: float = 3600) -> None:
        self.max_entries, self.ttl = max_entries, ttl
        self._entries: OrderedDict[bytes, Prepared] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, sql: str) -> bytes:
        handle = uuid.uuid4().bytes
        now = time.monotonic()
        with self._lock:
            self._entries[handle] = Prepared(sql, None, now)
            while self._entries and (
                len(self._entries) > self.max_entries
                or next(iter(self._entries.values())).last_used + self.ttl < now
            ):
                self._entries.popitem(last=False)
        return handle

    def get(self, handle: bytes) -> Prepared:
        with self._lock:
            prepared = self._entries.get(handle)
            if prepared is None:
                raise NotFoundError("prepared statement not found: closed or expired")
            prepared.last_used = time.monotonic()
            self._entries.move_to_end(handle)
            return prepared

    def close(self, handle: bytes) -> None:
        with self._lock:
            self._entries.pop(handle, None)
