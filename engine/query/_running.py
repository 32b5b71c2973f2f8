"""The statements running now: who runs them, from where, how far along — and stopping them.

Every statement ``QueryEngine.execute`` runs is listed here while it runs, under a short id.
Its owner sees and stops it; an admin sees and stops every one (``GET /v1/queries``,
``KILL QUERY '<id>'``, ``pg_cancel_backend``). A stop takes the statement's own cancel path,
as a client's cancel does. Progress is what the running statement reports through
``report`` (its thread carries the entry in a context variable): the pruning cascade's counts
once stage 2 is done, then the rows of the answer as DataFusion hands them over.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kyma.engine.errors import NotFoundError, PermissionDeniedError

log = logging.getLogger("kyma.query")  # the query log


@dataclass(frozen=True)
class Caller:
    """Who sends a statement: ``principal`` names them (``token 7``, ``anyone``), ``admin``
    may see and stop everyone's statements, ``client`` is the interface (http, pgwire,
    flight, repl); ``pid``: the Postgres protocol session's backend pid (None elsewhere);
    ``request_id``: the HTTP request's id (``X-Request-Id``), so a client finds its statement."""

    principal: str = "anyone"
    admin: bool = True
    client: str = "embedded"
    pid: int | None = None
    request_id: str | None = None


@dataclass
class Statement:
    id: str
    caller: Caller
    sql: str
    started: float  # time.time()
    stop: threading.Event = field(default_factory=threading.Event)
    stopped_by: str | None = None
    progress: dict[str, int] = field(default_factory=dict)
    _started_monotonic: float = field(default_factory=time.monotonic)

    @property
    def number(self) -> int:
        """The ``n`` of its id ``qn``."""
        return int(self.id[1:])

    def view(self) -> dict[str, Any]:
        """What a listing shows of it."""
        return {
            "id": self.id,
            "principal": self.caller.principal,
            "client": self.caller.client,
            "request_id": self.caller.request_id,
            "sql": self.sql,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "elapsed_ms": round((time.monotonic() - self._started_monotonic) * 1000, 1),
            "progress": dict(self.progress),
            "stopping": self.stop.is_set(),
        }


_current: contextvars.ContextVar[Statement | None] = contextvars.ContextVar(
    "kyma_running", default=None
)


def current_caller() -> Caller:
    """Who sent the statement running in this context (an embedded caller outside one)."""
    statement = _current.get()
    return statement.caller if statement is not None else Caller()


def current_statement() -> Statement | None:
    """The statement running in this context, if any."""
    return _current.get()


def report(**counts: int) -> None:
    """Set progress counters of the statement running in this context (none: nothing)."""
    statement = _current.get()
    if statement is not None:
        statement.progress.update(counts)


def add(**counts: int) -> None:
    """Add to progress counters of the statement running in this context."""
    statement = _current.get()
    if statement is not None:
        for name, value in counts.items():
            statement.progress[name] = statement.progress.get(name, 0) + value


class RunningStatements:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._statements: dict[str, Statement] = {}
        self._ids = itertools.count(1)

    @contextmanager
    def running(self, sql: str, caller: Caller) -> Iterator[Statement]:
        """List the statement while the block runs; its thread reports progress to it."""
        statement = Statement(f"q{next(self._ids)}", caller, sql, time.time())
        with self._lock:
            self._statements[statement.id] = statement
        token = _current.set(statement)
        try:
            yield statement
        finally:
            _current.reset(token)
            with self._lock:
                self._statements.pop(statement.id, None)

    def all(self) -> list[Statement]:
        """Every running statement, oldest first (``pg_stat_activity`` tells what to show)."""
        with self._lock:
            return list(self._statements.values())

    def visible(self, caller: Caller) -> list[Statement]:
        """The statements ``caller`` may see: their own, or all for an admin; oldest first."""
        return [s for s in self.all() if caller.admin or s.caller.principal == caller.principal]

    def stop(self, statement_id: str, caller: Caller) -> Statement:
        """Stop a running statement; NotFoundError for one that is not running (or that the
        caller may not see), PermissionDeniedError for another's without admin."""
        with self._lock:
            statement = self._statements.get(statement_id)
        if statement is None:
            raise NotFoundError(f"no running statement {statement_id!r}")
        if not caller.admin and statement.caller.principal != caller.principal:
            raise PermissionDeniedError(
                f"statement {statement_id!r} is {statement.caller.principal}'s: only its owner"
                " or an admin may stop it",
                scope="admin",
            )
        statement.stopped_by = caller.principal
        statement.stop.set()
        log.info(
            "query %s of %s (%s) cancelled by %s",
            statement.id,
            statement.caller.principal,
            statement.caller.client,
            caller.principal,
        )
        return statement
