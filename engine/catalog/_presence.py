"""Whether this catalog is the only kyma process on its database: then no other process can
commit, and the tables it last read (or wrote) are still current without asking Postgres.

Every catalog holds a shared advisory lock on a connection of its own for as long as it is
open. One that finds itself alone takes the same lock exclusively too: it is then *sole*.
A catalog that opens later first tells the others (``NOTIFY``) and waits for its shared
lock, which it gets only once the sole one, woken by the notification, stopped trusting
what it read and released its exclusive lock. So any commit from another process lands
after the sole one stopped trusting its reads: a statement that follows a commit
acknowledged to any client sees it. The sole one takes the lock again once it is alone.

Trust also lapses when the lock's connection has not answered for ``LEASE`` seconds (a
catalog that lost it may have lost the lock). Writes outside kyma (``psql``) are not seen
by a sole catalog until its next own write of the table: the catalog is kyma's own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

import psycopg

from kyma.engine.errors import CatalogUnavailableError

log = logging.getLogger("kyma.catalog")
CHANNEL = "kyma_presence"
_LOCK = (0x6B796D61, 1)  # "kyma", presence: apart from the ledger's and migrations' locks
PERIOD = 1.0
"""Seconds between the connection's checks (a heartbeat, or another try to be sole)."""
LEASE = 5.0
"""Trust lapses when the lock's connection has not answered for this long."""
JOIN_SECONDS = 30.0
"""How long a new catalog waits for the sole one to step down before it gives up."""


class Presence:
    """Keeps this catalog's presence lock; ``token()`` says whether it is sole."""

    def __init__(self, url: str, wake: Callable[[str], None]) -> None:
        """``wake(sql)`` runs a statement on another connection (to wake the watch)."""
        self._conn = psycopg.connect(url, autocommit=True)
        self._wake = wake
        self._lock = threading.Lock()
        self._sole = False
        self._generation = 0
        self._answered = time.monotonic()
        self._closed = threading.Event()
        self._join()
        self._try_sole()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="catalog-presence")
        self._thread.start()

    def _join(self) -> None:
        """Tell the others, and hold the shared lock once a sole one let go of its own (told
        again each second: one that became sole after the first word must hear it too)."""
        conn = self._conn
        conn.execute(f"LISTEN {CHANNEL}")
        conn.execute(f"SET lock_timeout = '{int(PERIOD * 1000)}ms'")
        deadline = time.monotonic() + JOIN_SECONDS
        while True:
            conn.execute("SELECT pg_notify(%s, 'join')", (CHANNEL,))
            try:
                conn.execute("SELECT pg_advisory_lock_shared(%s, %s)", _LOCK)
                break
            except psycopg.errors.LockNotAvailable:
                if time.monotonic() > deadline:
                    conn.close()
                    raise CatalogUnavailableError(
                        f"another kyma on this catalog did not make way within {JOIN_SECONDS:g} s"
                    ) from None
        conn.execute("RESET lock_timeout")

    def token(self) -> int | None:
        """While sole, a number that changes each time it became sole again (so what was
        read before is not trusted); None when other catalogs may commit."""
        with self._lock:
            if self._sole and time.monotonic() - self._answered < LEASE:
                return self._generation
            return None

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(psycopg.Error, CatalogUnavailableError):
            self._wake(f"NOTIFY {CHANNEL}, 'leave'")  # else it ends within its period
        self._thread.join(timeout=PERIOD * 2)
        self._conn.close()  # its locks go with it

    def _watch(self) -> None:
        try:
            while not self._closed.is_set():
                heard = list(self._conn.notifies(timeout=PERIOD, stop_after=1))
                own = self._conn.info.backend_pid
                joined = any(n.payload == "join" and n.pid != own for n in heard)
                if joined:
                    self._step_down()
                elif self._sole:
                    self._conn.execute("SELECT 1")
                    self._answered_now()
                else:
                    self._try_sole()
        except psycopg.Error as e:
            if not self._closed.is_set():
                log.warning("catalog presence lost (every statement asks the catalog): %s", e)
        with self._lock:
            self._sole = False

    def _try_sole(self) -> None:
        (sole,) = self._conn.execute("SELECT pg_try_advisory_lock(%s, %s)", _LOCK).fetchone()
        with self._lock:
            self._answered = time.monotonic()
            if sole and not self._sole:
                self._generation += 1
            self._sole = bool(sole)

    def _step_down(self) -> None:
        """Another catalog opens: stop trusting, then let it in (its commits come after)."""
        with self._lock:
            was, self._sole = self._sole, False
        if was:
            self._conn.execute("SELECT pg_advisory_unlock(%s, %s)", _LOCK)
        self._answered_now()

    def _answered_now(self) -> None:
        with self._lock:
            self._answered = time.monotonic()
