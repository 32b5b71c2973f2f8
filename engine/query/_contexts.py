"""DataFusion sessions handed from one statement to the next, for their runtime's caches.

A session's runtime caches what its Parquet scans read of each file besides the rows: the
footer and page index (``datafusion.runtime.metadata_cache_limit``), the file's statistics
and listing. A session made per statement reads every footer of every extent again, and
extents are immutable: a statement's sessions go back to a pool when it ends, their tables
deregistered, and the next statement with the same settings takes one (a quarter less CPU
for TPC-H's Q6 over twelve extents; BENCHMARKS.md, ``scan36``). Each session serves one
statement at a time, so its memory pool still bounds that statement alone. A session that
outlives its statement (a kept plan's, ``_prepared``) is not given back; one left holding
more than tables in the default schema is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from datafusion import SessionContext

IDLE = 4
"""Idle sessions kept per setting (about as many as statements run at once)."""
_CATALOG, _SCHEMA = "datafusion", "public"


class Contexts:
    """Idle sessions by their settings' key."""

    def __init__(self, idle: int = IDLE) -> None:
        self.idle = idle
        self._idle: dict[Hashable, list[SessionContext]] = {}
        self._lock = threading.Lock()

    def take(self, key: Hashable, make: Callable[[], SessionContext]) -> SessionContext:
        with self._lock:
            found = self._idle.get(key)
            if found:
                return found.pop()
        return make()

    def give(self, key: Hashable, ctx: SessionContext) -> None:
        """``ctx`` back, emptied of its tables (dropped when it holds anything else)."""
        if ctx.catalog_names() != {_CATALOG} or ctx.catalog().schema_names() != {_SCHEMA}:
            return
        schema = ctx.catalog().schema()
        for name in schema.names():
            schema.deregister_table(name)
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < self.idle:
                idle.append(ctx)

    @contextmanager
    def lease(self) -> Iterator[None]:
        """A statement: the sessions ``session`` makes while it runs go back when it ends,
        unless ``keep`` was told of them."""
        held = _Lease()
        _current.set(held)
        try:
            yield
        except BaseException:
            held.taken.clear()  # a failed statement's sessions are dropped, not reused
            raise
        finally:
            if _current.get() is held:  # live rows end it later, maybe on another thread
                _current.set(None)
            held.open = False
            for key, ctx in held.taken:
                if not any(ctx is kept for kept in held.kept):
                    self.give(key, ctx)


class _Lease:
    def __init__(self) -> None:
        self.open = True
        self.taken: list[tuple[Hashable, SessionContext]] = []
        self.kept: list[SessionContext] = []


_current: ContextVar[_Lease | None] = ContextVar("kyma_contexts_lease", default=None)


def session(key: Hashable, make: Callable[[], SessionContext]) -> SessionContext:
    """A session with settings ``key`` (``make`` makes one): an idle one when the statement
    runs under ``contexts.lease()``, a new one otherwise."""
    held = _current.get()
    if held is None or not held.open:
        return make()
    ctx = contexts.take(key, make)
    held.taken.append((key, ctx))
    return ctx


def keep(ctx: SessionContext) -> None:
    """``ctx`` outlives the statement (a kept plan's session): not given back."""
    held = _current.get()
    if held is not None:
        held.kept.append(ctx)


contexts = Contexts()
