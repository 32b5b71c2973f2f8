"""The Postgres protocol sessions of a server, as ``pg_stat_activity`` lists them and
``pg_cancel_backend`` / ``pg_terminate_backend`` reach them: each under its backend pid (the
pid of its BackendKeyData), with who opened it, from where, and its last statement.

A session's running statement is the engine's (``RunningStatements``, whose caller carries
the pid): cancelling it takes the path ``KILL QUERY`` takes. Terminating a session stops its
statement and cuts the reading half of its socket; the connection then tells its client
FATAL 57P01, as Postgres does.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kyma.engine.query import Caller
from kyma.engine.query._running import RunningStatements, Statement
from kyma.pgwire._session import Session

log = logging.getLogger("kyma.query")  # the query log
TERMINATED = "terminating connection due to administrator command"  # 57P01, FATAL


@dataclass
class Backend:
    """One authenticated session: ``caller`` (whose ``pid`` is this backend's), the
    ``session`` (its settings and transaction state, live), the client's address, and
    ``cut``, which ends the connection's reading."""

    caller: Caller
    session: Session
    client: tuple[str, int] | None
    cut: Callable[[], None]
    started: float = field(default_factory=time.time)
    query: str = ""  # the last statement, as Postgres shows an idle session's
    query_start: float | None = None
    xact_start: float | None = None  # the start of its open transaction block
    state_change: float = field(default_factory=time.time)
    terminated: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)

    @property
    def pid(self) -> int:
        assert self.caller.pid is not None
        return self.caller.pid

    @property
    def state(self) -> str:
        """Postgres's state of a session waiting for its client."""
        return {b"I": "idle", b"T": "idle in transaction"}.get(
            self.session.status, "idle in transaction (aborted)"
        )

    def ran(self, sql: str, started: float) -> None:
        """A statement that began at ``started`` (time.time()) has ended."""
        self.query, self.query_start, self.state_change = sql, started, time.time()
        if not self.session.in_transaction:
            self.xact_start = None
        elif self.xact_start is None:
            self.xact_start = started


class Backends:
    """The open sessions by pid; ``running`` is the engine's list of running statements."""

    def __init__(self, running: RunningStatements) -> None:
        self.running = running
        self._lock = threading.Lock()
        self._backends: dict[int, Backend] = {}

    def new_pid(self) -> int:
        """A pid no open session has (positive and below 2**31, as Postgres's are)."""
        with self._lock:
            while True:
                pid = 1 + secrets.randbelow((1 << 31) - 2)
                if pid not in self._backends:
                    return pid

    def open(self, backend: Backend) -> None:
        with self._lock:
            self._backends[backend.pid] = backend

    def close(self, backend: Backend) -> None:
        """The session ended: it is no longer listed (before its socket closes)."""
        with self._lock:
            self._backends.pop(backend.pid, None)
        backend.ended.set()

    def all(self) -> list[Backend]:
        with self._lock:
            return sorted(self._backends.values(), key=lambda b: b.started)

    def get(self, pid: int) -> Backend | None:
        with self._lock:
            return self._backends.get(pid)

    def statement(self, pid: int) -> Statement | None:
        """The statement the session ``pid`` runs in the engine now, if any."""
        return next((s for s in self.running.all() if s.caller.pid == pid), None)

    def terminate(self, backend: Backend, by: Caller) -> None:
        """End the session: its running statement stops, its connection tells its client
        FATAL 57P01 and closes."""
        backend.terminated.set()
        statement = self.statement(backend.pid)
        if statement is not None:
            self.running.stop(statement.id, by)
        log.info(
            "session %d of %s terminated by %s", backend.pid, backend.caller.principal, by.principal
        )
        with self._lock:  # not closed meanwhile: its socket is still its own
            if backend.pid in self._backends:
                backend.cut()
