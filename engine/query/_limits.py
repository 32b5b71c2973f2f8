"""Query limits: a timeout, a memory pool, concurrent slots and a result size.

DataFusion's Python API cannot cancel a running query from another thread (it only checks
for signals, which Python delivers to the main thread). So a statement runs in a thread of
its own while the caller waits up to the timeout or its cancel (a client that went away, a
Postgres CancelRequest, Ctrl-C). Then the caller gets QueryTimeoutError/QueryCancelledError
at once, and the statement's work stops at its next checkpoint: between scanned blocks, and
while DataFusion computes a batch: its stream is awaited on an event loop of the statement's
thread, which the abandoned token wakes to cancel the await; dropping the stream then stops
DataFusion's tasks (a long aggregation too) at their next yield. Its slot is freed only then,
so abandoned work still counts against the concurrency limit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import pyarrow as pa
from datafusion import RuntimeEnvBuilder, SessionConfig, SessionContext

from kyma.engine.errors import (
    EngineFailedError,
    LimitExceededError,
    QueryCancelledError,
    QueryTimeoutError,
    TooManyQueriesError,
    error_code,
)
from kyma.engine.query import _running
from kyma.engine.query._workers import Workers

T = TypeVar("T")
Cancel = threading.Event | Callable[[], bool]  # set, or true, when the caller gave up
log = logging.getLogger("kyma.query")
_POLL_SECONDS = 0.05  # how often a waiting caller looks at its cancel event


@dataclass(frozen=True)
class QueryLimits:
    """Per statement; 0 means no limit. ``memory_bytes`` bounds DataFusion's operators
    (sorts, aggregates, joins) of one statement, and the estimated results of functions
    with literal sizes (``repeat``, ``range``…); nothing spills to disk.
    ``max_statement_bytes``, ``max_expression_depth`` and ``max_in_list_values`` bound the
    SQL text before it parses (see ``_guard``); ``max_plan_relations`` its set operations,
    query blocks and table references (``_complexity``)."""

    timeout_seconds: float = 300
    memory_bytes: int = 2 << 30
    max_concurrent: int = 16
    max_result_rows: int = 1_000_000
    max_result_bytes: int = 256 << 20
    max_statement_bytes: int = 1 << 20
    max_expression_depth: int = 1000
    max_in_list_values: int = 10_000
    max_plan_relations: int = 1000


@dataclass
class QueryEvent:
    """One statement, for listeners: ``outcome`` is ok, error, timeout, cancelled or rejected;
    ``error`` the failure's kind (``sql_error``), ``rows`` the answer's row count."""

    seconds: float
    outcome: str
    stats: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    rows: int | None = None


class _Token:
    def __init__(self, timeout: float, statement_timeout: bool = False) -> None:
        self.timeout = timeout
        self.statement_timeout = statement_timeout  # the session's, not the server's
        self.deadline = time.monotonic() + timeout
        self.cancelled = threading.Event()
        self.on_cancel: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Mark the statement abandoned and stop the outside work it waits on."""
        with self._lock:
            self.cancelled.set()
            hooks = list(self.on_cancel)
        for hook in hooks:
            try:
                hook()
            except Exception:  # a failed cancel leaves that work to its own timeout
                log.warning("cancelling a statement's work failed", exc_info=True)

    def error(self) -> QueryTimeoutError:
        return _timeout(self.timeout, self.statement_timeout)

    @contextmanager
    def watching(self, cancel: Callable[[], None]) -> Iterator[None]:
        with self._lock:
            if self.cancelled.is_set():
                raise self.error()
            self.on_cancel.append(cancel)
        try:
            yield
        finally:
            with self._lock:
                self.on_cancel.remove(cancel)


_current: contextvars.ContextVar[_Token | None] = contextvars.ContextVar("kyma_query", default=None)


def checkpoint() -> None:
    """Raise QueryTimeoutError if the running statement was abandoned past its timeout."""
    token = _current.get()
    if token is not None and token.cancelled.is_set():
        raise token.error()


@contextmanager
def cancelled_with_statement(cancel: Callable[[], None]) -> Iterator[float | None]:
    """Outside work (a catalog statement) run by the running statement: ``cancel`` is called
    if the statement is abandoned at its timeout meanwhile. Yields the seconds it has left
    (None: no timeout), for the work's own deadline."""
    token = _current.get()
    if token is None:
        yield None
        return
    with token.watching(cancel):
        yield max(0.001, token.deadline - time.monotonic()) if token.timeout else None


def contained(work: Callable[[], T]) -> T:
    """``work()``, with a panic inside DataFusion as EngineFailedError. pyo3 raises Rust panics
    as ``PanicException``, a BaseException: left alone, it passes every ``except Exception``
    and ends the thread serving the request (or the whole REPL) instead of one statement."""
    try:
        return work()
    except BaseException as e:
        if type(e).__name__ != "PanicException":  # KeyboardInterrupt, SystemExit...
            raise
        raise _panicked(e) from None


def _panicked(panic: BaseException) -> EngineFailedError:
    first = (str(panic).strip().splitlines() or [""])[0]
    log.error("DataFusion panicked on a statement: %s", first, exc_info=panic)
    return EngineFailedError(
        f"the query engine failed on this statement (DataFusion panicked: {first});"
        " the statement was stopped, the server goes on"
    )


def _timeout(seconds: float, statement_timeout: bool = False) -> QueryTimeoutError:
    if statement_timeout:  # Postgres's words for its statement_timeout
        return QueryTimeoutError(
            "canceling statement due to statement timeout", "statement_timeout"
        )
    return QueryTimeoutError(
        f"the statement ran past KYMA_QUERY_TIMEOUT_SECONDS ({seconds:g} s) and was cancelled",
        _setting("KYMA_QUERY_TIMEOUT_SECONDS"),
    )


def _setting(env: str) -> str:
    """A limit's name in errors, as the ingest limits name theirs: the settings key."""
    return env.removeprefix("KYMA_").lower()


class QueryGate:
    """Runs statements within ``limits``; ``listeners`` hear of every statement."""

    def __init__(self, limits: QueryLimits | None) -> None:
        self.limits = limits
        self.listeners: list[Callable[[QueryEvent], None]] = []
        self._lock = threading.Lock()
        self.running = 0
        self.workers = Workers()

    def run(
        self,
        work: Callable[[], T],
        cancel: Cancel | None = None,
        timeout: float = 0,
        heard: bool = True,
    ) -> T:
        """``work()`` within the limits; ``cancel`` set (or true) while it runs abandons it
        at once (QueryCancelledError) and stops it at its next checkpoint, as a timeout
        does. ``timeout`` (seconds, 0: none) is the session's statement_timeout: the lower
        of it and the server's timeout applies. ``heard``: False for reading on an answer
        already counted (a cursor's next rows), which listeners do not hear of."""
        started = time.perf_counter()
        stats: dict[str, Any] = {}
        outcome, error, rows = "error", None, None
        try:
            result = self._run(work, cancel, timeout)
            outcome, stats = "ok", getattr(result, "stats", {})
            rows = getattr(getattr(result, "table", None), "num_rows", None)
            return result
        except Exception as e:
            error = error_code(e)
            if isinstance(e, TooManyQueriesError):
                outcome = "rejected"
            elif isinstance(e, QueryTimeoutError):
                outcome = "timeout"
            elif isinstance(e, QueryCancelledError):
                outcome = "cancelled"
            raise
        finally:
            event = QueryEvent(time.perf_counter() - started, outcome, stats, error, rows)
            for listener in self.listeners if heard else ():
                listener(event)

    def _run(self, work: Callable[[], T], cancel: Cancel | None, session: float) -> T:
        limits = self.limits
        if limits is not None:
            with self._lock:
                if limits.max_concurrent and self.running >= limits.max_concurrent:
                    raise TooManyQueriesError(
                        f"{self.running} statements are running, as many as"
                        f" KYMA_MAX_CONCURRENT_QUERIES ({limits.max_concurrent}) allows;"
                        " try again shortly",
                        _setting("KYMA_MAX_CONCURRENT_QUERIES"),
                    )
                self.running += 1
        timeout = limits.timeout_seconds if limits is not None else 0
        ours = bool(session) and (not timeout or session < timeout)
        timeout = session if ours else timeout
        if not timeout and cancel is None:
            try:
                return contained(work)
            finally:
                self._release()
        token = _Token(timeout, ours)
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            _current.set(token)
            try:
                box["result"] = contained(work)
            except BaseException as e:  # handed to the waiting caller
                box["error"] = e
            finally:
                self._release()
                done.set()

        context = contextvars.copy_context()  # request ids and the like follow the work
        self.workers.run(partial(context.run, run))
        deadline = time.monotonic() + timeout if timeout else None
        while not done.wait(_POLL_SECONDS if cancel is not None else timeout):
            if cancel is not None and (cancel() if callable(cancel) else cancel.is_set()):
                token.cancel()
                raise QueryCancelledError("canceling statement due to user request")
            if deadline is not None and time.monotonic() >= deadline:
                token.cancel()
                raise token.error()
        if "error" in box:
            raise box["error"]
        return box["result"]

    def _release(self) -> None:
        if self.limits is None:
            return
        with self._lock:
            self.running -= 1


LATE_MATERIALIZATION = {
    "datafusion.execution.parquet.pushdown_filters": "true",
    "datafusion.execution.parquet.reorder_filters": "true",
}
"""DataFusion's Parquet options that run a statement's filters inside the Parquet decoder:
the filter columns are decoded first, cheapest filter first, and the other columns only for
the rows that pass. Measured on ClickBench's queries (1 M rows, cache off): 3x faster for a
statement that reads more columns than it filters on (``SELECT * … WHERE url LIKE … ORDER BY
… LIMIT 10``), up to 1.4x slower when it filters on every column it reads (nothing left to
skip decoding), so a session turns them on only for the former, and not for aggregates
(``_sources.filters_fewer_columns``). The page index, string views, row-group statistics
and bloom filters are on by default."""


def session_context(limits: QueryLimits | None, late: bool = False) -> SessionContext:
    """A DataFusion session whose operators share a memory pool of ``memory_bytes``;
    ``late``: with ``LATE_MATERIALIZATION``."""
    config = SessionConfig(LATE_MATERIALIZATION if late else {})
    if limits is None or not limits.memory_bytes:
        return SessionContext(config)
    runtime = (
        RuntimeEnvBuilder().with_fair_spill_pool(limits.memory_bytes).with_disk_manager_disabled()
    )
    return SessionContext(config, runtime)


def memory_error(limits: QueryLimits) -> LimitExceededError:
    """The statement ran out of its memory pool: a LimitExceededError naming the limit."""
    return LimitExceededError(
        f"the statement needs more memory than KYMA_QUERY_MEMORY_BYTES ({limits.memory_bytes})"
        " allows; filter or aggregate more, or raise the limit",
        _setting("KYMA_QUERY_MEMORY_BYTES"),
    )


def collect(
    stream: Any, schema: pa.Schema, limits: QueryLimits | None, awaited: bool = True
) -> pa.Table:
    """A DataFusion record-batch stream as a table, stopping (and so cancelling the rest of
    the query) at a checkpoint, when the statement is abandoned while a batch is computed,
    or past the result limits. ``awaited=False``: read without an event loop, checked for
    cancel between batches only (a kept plan over a small table in memory: ``_prepared``)."""
    batches: list[pa.RecordBatch] = []
    counted = ResultCount(limits)

    def add(batch: Any) -> bool:
        batches.append(counted.add(batch.to_pyarrow()))
        return False

    holder = [stream]  # emptied when abandoned: a traceback must not keep it running
    del stream
    if awaited:
        drain(holder, add)
    else:
        for batch in holder.pop():
            add(batch)
    if not batches:
        return schema.empty_table()
    # The batches' schema, not the plan's: they may differ in nullability or metadata.
    first = batches[0].schema
    return pa.Table.from_batches([b if b.schema == first else b.cast(first) for b in batches])


class ResultCount:
    """The rows and bytes of an answer so far, held to the result limits (None: none)."""

    def __init__(self, limits: QueryLimits | None) -> None:
        self.limits, self.rows, self.bytes = limits, 0, 0

    def add(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        checkpoint()
        self.rows += batch.num_rows
        self.bytes += batch.nbytes
        _running.add(rows_returned=batch.num_rows)
        if self.limits is not None:
            _check_result(self.limits, self.rows, self.bytes)
        return batch


def drain(holder: list[Any], add: Callable[[Any], bool]) -> bool:
    """Hand each batch of the DataFusion stream in ``holder`` to ``add`` until it returns
    True (then True: the stream stays in ``holder``, to be read on) or the stream ends
    (False). Under a running statement's token the batches are awaited, so that abandoning
    the statement cancels the await; the stream is then dropped from ``holder``."""
    token = _current.get()
    if token is None:  # run inline, without limits: nothing can abandon it
        return any(add(batch) for batch in holder[0])
    return _consume(holder, add, token)


def _consume(holder: list[Any], add: Callable[[Any], bool], token: _Token) -> bool:
    """``add`` each batch of the stream in ``holder``, awaited on an event loop of this
    thread; the statement's cancel cancels the await (DataFusion's future is dropped), then
    the stream is dropped, which aborts DataFusion's tasks, and the timeout is raised."""

    async def each() -> bool:
        async for batch in holder[0]:
            if add(batch):
                return True
        return False

    _settle_at_exit()
    loop = asyncio.new_event_loop()
    cancelled = False
    stopped = False

    def wake() -> None:  # on the cancelling thread
        loop.call_soon_threadsafe(_cancel_tasks, loop)

    try:
        with token.watching(wake):
            stopped = loop.run_until_complete(each())
    except asyncio.CancelledError:
        # Raised outside this handler: as the timeout's context, its traceback would keep
        # DataFusion's frames, and so the stream, running until the next gc.
        cancelled = True
    except Exception as e:  # a panic in an awaited future loses its message to RustPanic
        if type(e).__name__ == "RustPanic":
            raise _panicked(e) from None
        raise
    finally:
        loop.close()
    if cancelled:
        holder.clear()
        raise token.error()
    return stopped


_SETTLE_SECONDS = 0.05
_settling: list[bool] = []


def _settle_at_exit() -> None:
    """Once: let the interpreter wait ``_SETTLE_SECONDS`` at exit. The runtime thread that
    hands an awaited batch over may still be releasing the GIL when the statement (and a
    one-shot ``kyma sql``) ends; finalizing under it crashes the process (1 exit in 7 without
    the wait, none in 20 with it)."""
    if not _settling:
        _settling.append(True)
        atexit.register(time.sleep, _SETTLE_SECONDS)


def _cancel_tasks(loop: asyncio.AbstractEventLoop) -> None:
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _check_result(limits: QueryLimits, rows: int, size: int) -> None:
    for name, limit, value, unit in (
        ("KYMA_MAX_RESULT_ROWS", limits.max_result_rows, rows, "rows"),
        ("KYMA_MAX_RESULT_BYTES", limits.max_result_bytes, size, "bytes"),
    ):
        if limit and value > limit:
            raise LimitExceededError(
                f"the result has more than {limit} {unit}, the most {name} allows;"
                " add a LIMIT, filter or aggregate",
                _setting(name),
            )
