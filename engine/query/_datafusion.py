"""Running SQL on DataFusion, with its errors translated into kyma's.

DataFusion raises one exception type for every failure, so its errors are told apart by
their text: here, in one place, and nowhere else.
"""

from __future__ import annotations

import re

import pyarrow as pa
from datafusion import SessionContext

from kyma.engine.errors import (
    KymaError,
    LimitExceededError,
    NotFoundError,
    SqlError,
    UnsupportedStatementError,
)
from kyma.engine.query._limits import QueryLimits, collect, memory_error

_MEMORY = "Resources exhausted"  # the statement outgrew its memory pool
_NOT_FOUND = (
    re.compile(r"No field named (\S+)"),
    re.compile(r"table '([^']+)' not found"),
    re.compile(r"Invalid function '([^']+)'"),
)

# A subquery DataFusion could not turn into a join (rewrite/correlated.py says which it can).
_UNPLANNED_SUBQUERY = re.compile(
    r"Physical plan does not support logical expression (ScalarSubquery|InSubquery|Exists)"
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
    ctx: SessionContext, sql: str, *, explain: bool = False, limits: QueryLimits | None = None
) -> pa.Table:
    """The answer, streamed batch by batch so that a timeout or the result limits stop it."""
    try:
        frame = ctx.sql(("EXPLAIN " if explain else "") + sql)
        return collect(frame.execute_stream(), frame.schema(), limits)
    except KymaError:
        raise
    except Exception as e:  # DataFusion raises ValueError/Exception with its message
        raise translate(e, limits) from None


def translate(error: Exception, limits: QueryLimits | None = None) -> KymaError:
    """A DataFusion error as a kyma error: out of memory under ``limits`` →
    LimitExceededError, unknown names → NotFoundError, a subquery it cannot plan →
    UnsupportedStatementError, else SqlError."""
    message = str(error).strip()
    if limits is not None and _MEMORY in message:
        return memory_error(limits)
    for pattern in _NOT_FOUND:
        if pattern.search(message):
            return NotFoundError(message.splitlines()[0])
    if subquery := _UNPLANNED_SUBQUERY.search(message):
        return UnsupportedStatementError(
            f"this correlated subquery ({subquery.group(1)}) is not supported: correlate it"
            " by comparisons of columns in its WHERE, ANDed, and aggregate its one column"
        )
    for pattern in _KYMA_CAUSE:  # a kyma error raised in a UDF: its message, no traceback
        if cause := pattern.search(message):
            if cause.group("kind") == "LimitExceededError":  # kyma_size_guard's
                return LimitExceededError(cause.group("message"), "query_memory_bytes")
            return SqlError(cause.group("message"))
    return SqlError(message.splitlines()[0] if message else type(error).__name__)
