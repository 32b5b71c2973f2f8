"""Running SQL on DataFusion, with its errors translated into kyma's.

DataFusion raises one exception type for every failure, so its errors are told apart by
their text: here, in one place, and nowhere else.
"""

from __future__ import annotations

import re

import pyarrow as pa
from datafusion import SessionContext

from kyma.engine import errors
from kyma.engine.errors import KymaError, LimitExceededError, NotFoundError, SqlError
from kyma.engine.query._limits import QueryLimits, collect, memory_error

_MEMORY = "Resources exhausted"  # the statement outgrew its memory pool
_NOT_FOUND = (
    re.compile(r"No field named (\S+)"),
    re.compile(r"table '([^']+)' not found"),
    re.compile(r"Invalid function '([^']+)'"),
)

# How DataFusion wraps a Python exception raised in a UDF: the traceback's last line, or
# ``PyErr { type: <class 'kyma.engine.errors.SqlError'>, value: SqlError("…"), traceback: … }``.
_KYMA_CAUSE = (
    re.compile(
        r"<class 'kyma\.engine\.errors\.(?P<kind>\w+)'>, value: \w+\((?P<q>[\"'])"
        r"(?P<message>.*?)(?P=q)\)"
    ),
    re.compile(r"kyma\.engine\.errors\.(?P<kind>\w+): (?P<message>.*)"),
)


def run_datafusion(
    ctx: SessionContext,
    sql: str,
    *,
    explain: bool | str = False,
    limits: QueryLimits | None = None,
) -> pa.Table:
    """The answer, streamed batch by batch so that a timeout or the result limits stop it.
    ``explain``: True for the plans, ``"analyze"`` to run the statement and answer the plan
    with each operator's metrics (rows, time, memory)."""
    prefix = {False: "", True: "EXPLAIN ", "analyze": "EXPLAIN ANALYZE "}[explain]
    try:
        frame = ctx.sql(prefix + sql)
        return collect(frame.execute_stream(), frame.schema(), limits)
    except KymaError:
        raise
    except Exception as e:  # DataFusion raises ValueError/Exception with its message
        raise translate(e, limits) from None


def translate(error: Exception, limits: QueryLimits | None = None) -> KymaError:
    """A DataFusion error as a kyma error: out of memory under ``limits`` →
    LimitExceededError, unknown names → NotFoundError, else SqlError."""
    message = str(error).strip()
    if limits is not None and _MEMORY in message:
        return memory_error(limits)
    for pattern in _NOT_FOUND:
        if pattern.search(message):
            return NotFoundError(message.splitlines()[0])
    for pattern in _KYMA_CAUSE:  # a kyma error raised in a UDF: its message, no traceback
        if cause := pattern.search(message):
            kind = cause.group("kind")
            if kind == "LimitExceededError":  # kyma_size_guard's
                return LimitExceededError(cause.group("message"), "query_memory_bytes")
            raised = getattr(errors, kind, None)  # a SqlError subclass keeps its SQLSTATE
            if isinstance(raised, type) and issubclass(raised, SqlError):
                return raised(cause.group("message"))
            return SqlError(cause.group("message"))
    return SqlError(message.splitlines()[0] if message else type(error).__name__)
