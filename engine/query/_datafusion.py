"""Running SQL on DataFusion, with its errors translated into kyma's.

DataFusion raises one exception type for every failure, so its errors are told apart by
their text: here, in one place, and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pyarrow as pa
from datafusion import DataFrame, ExecutionPlan, SessionContext

from kyma.engine import errors
from kyma.engine.errors import (
    DivisionByZeroError,
    GroupingError,
    InvalidDatetimeError,
    InvalidTextError,
    KymaError,
    NotFoundError,
    OutOfRangeError,
    SqlError,
    UndefinedColumnError,
    UndefinedFunctionError,
    UnsupportedStatementError,
)
from kyma.engine.query import _running
from kyma.engine.query._limits import QueryLimits, checkpoint, collect, memory_error

_MEMORY = "Resources exhausted"  # the statement outgrew its memory pool

# Postgres's names of the Arrow types DataFusion's messages name.
_PG_TYPES = {
    "Int16": "smallint",
    "Int32": "integer",
    "Int64": "bigint",
    "Float32": "real",
    "Float64": "double precision",
    "Boolean": "boolean",
    "Date32": "date",
    "Utf8": "text",
}


def _pg_types(operation: str, sep: str = " ") -> str:
    """``Interval(MonthDayNano) * Int64`` → ``interval * bigint``; ``sep=", "`` for an
    argument list (commas inside a type's parentheses are its own).

    >>> _pg_types('Utf8, Timestamp(ns, Some("UTC"))', ", ")
    'text, timestamp with time zone'
    """
    words = _arguments(operation) if sep.strip() else operation.split()
    return sep.join(_pg_type(word.strip()) for word in words)


def _arguments(listed: str) -> list[str]:
    """``a, B(c, d)`` → ``["a", " B(c, d)"]``: split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(listed):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(listed[start:i])
            start = i + 1
    return [*parts, listed[start:]]


def _pg_type(arrow: str) -> str:
    if arrow.startswith("Decimal"):
        return "numeric"
    if arrow.startswith("Timestamp"):
        return "timestamp with time zone"
    if arrow.startswith("Interval") or arrow.startswith("Duration"):
        return "interval"
    return _PG_TYPES.get(arrow, arrow)


# (pattern over the whole message, the kyma error it means): the first match wins.
_KNOWN: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], KymaError]], ...] = (
    (
        re.compile(r"No field named (\S+?)\.?(?:\s|$)"),
        lambda m: UndefinedColumnError(f"column {m.group(1).strip(chr(34))} does not exist"),
    ),
    (re.compile(r"table '([^']+)' not found"), lambda m: NotFoundError(m.group(0))),
    (
        re.compile(r"Invalid function '([^']+)'"),
        lambda m: UndefinedFunctionError(f"function {m.group(1)}() does not exist"),
    ),
    (
        re.compile(r"Cannot get result type for temporal operation (.+?): Invalid argument"),
        lambda m: UnsupportedStatementError(
            f"{_pg_types(m.group(1))} is not supported (interval arithmetic: only adding and"
            " subtracting intervals and timestamps)"
        ),
    ),
    (
        re.compile(r"No function matches the given name and argument types '(\w+)\((.*?)\)'"),
        lambda m: UndefinedFunctionError(
            f"function {m.group(1)}({_pg_types(m.group(2), ', ')}) does not exist"
        ),
    ),
    (
        re.compile(r"Cannot coerce arithmetic expression (\S+) (\S+) (\S+) to valid types"),
        lambda m: UndefinedFunctionError(
            f"operator does not exist: {_pg_types(' '.join(m.groups()))}"
        ),
    ),
    (
        re.compile(r'column "([^"]+)" must appear in the GROUP BY clause'),
        lambda m: GroupingError(
            f'column "{m.group(1)}" must appear in the GROUP BY clause or be used in an'
            " aggregate function"
        ),
    ),
    (
        re.compile(r"Expected (LIMIT|OFFSET) to be an integer or null, but got (\w+)"),
        lambda m: SqlError(
            f"argument of {m.group(1)} must be type bigint, not {_pg_type(m.group(2))}"
        ),
    ),
    (
        re.compile(r"Order by column out of bounds, specified: (\d+)"),
        lambda m: SqlError(f"ORDER BY position {m.group(1)} is not in select list"),
    ),
    (
        re.compile(r"Unsupported SQL type (.+)"),
        lambda m: UnsupportedStatementError(f"type {m.group(1)} is not supported here"),
    ),
    (re.compile(r"Divide by zero"), lambda m: DivisionByZeroError("division by zero")),
    (
        re.compile(r"Cannot get result type for decimal operation Decimal\d+\(\d+, \d+\) (\S+) "),
        lambda m: UnsupportedStatementError(
            f"numeric {m.group(1)} numeric: the result needs more than the 38 digits kyma keeps"
            " (two averages multiplied need 40 decimals); cast an operand to double precision"
        ),
    ),
    (
        re.compile(r"Error parsing timestamp from '(.*)'"),
        lambda m: InvalidDatetimeError(
            f"invalid input syntax for type timestamp with time zone: {m.group(1)!r}"
        ),
    ),
    (
        re.compile(r"Cannot cast string '(.*)' to value of (Date\w*|Timestamp\w*) type"),
        lambda m: InvalidDatetimeError(
            f"invalid input syntax for type {_pg_type(m.group(2))}: {m.group(1)!r}"
        ),
    ),
    (
        re.compile(r"Cannot cast string '(.*)' to value of (\w+) type"),
        lambda m: InvalidTextError(
            f"invalid input syntax for type {_pg_type(m.group(2))}: {m.group(1)!r}"
        ),
    ),
    (
        re.compile(r"Can't cast value (\S+) to type (\w+)"),
        lambda m: OutOfRangeError(f"{_pg_type(m.group(2))} out of range: {m.group(1)}"),
    ),
    (
        re.compile(r"value of (\S+) is out of range (\w+)"),
        lambda m: OutOfRangeError(f"{_pg_type(m.group(2))} out of range: {m.group(1)}"),
    ),
    (
        re.compile(r"(\S+) is too large to store in a Decimal\d+ of precision (\d+)"),
        lambda m: OutOfRangeError(
            f"numeric field overflow: {m.group(1)} has over {m.group(2)} digits"
        ),
    ),
    (
        re.compile(r"Arithmetic overflow|[Oo]verflow happened"),
        lambda m: OutOfRangeError("value out of range: overflow"),
    ),
)

# A subquery DataFusion could not turn into a join (rewrite/correlated.py says which it can).
_UNPLANNED_SUBQUERY = re.compile(
    r"Physical plan does not support logical expression (ScalarSubquery|InSubquery|Exists)"
)

# How DataFusion wraps a Python exception raised in a UDF: the traceback's last line, or
# ``PyErr { type: <class 'kyma.engine.errors.SqlError'>, value: SqlError("…"), traceback: … }``,
# or from an aggregate UDF ``Execution error: OutOfRangeError: …``.
_KYMA_CAUSE = (
    re.compile(
        r"<class 'kyma\.engine\.errors\.(?P<kind>\w+)'>, value: \w+\((?P<q>[\"'])"
        r"(?P<message>.*?)(?P=q)\)"
    ),
    re.compile(r"kyma\.engine\.errors\.(?P<kind>\w+): (?P<message>.*)"),
    re.compile(r"^DataFusion error: Execution error: (?P<kind>\w+Error): (?P<message>.*)"),
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
    return run_frame(planned(ctx, prefix + sql, limits), limits)


def planned(ctx: SessionContext, sql: str, limits: QueryLimits | None) -> DataFrame:
    """The statement planned in ``ctx`` (nothing run): it runs again as often as asked."""
    try:
        return ctx.sql(sql)
    except KymaError:
        raise
    except Exception as e:  # DataFusion raises ValueError/Exception with its message
        raise translate(e, limits) from None


def run_frame(frame: DataFrame, limits: QueryLimits | None) -> pa.Table:
    """A planned statement's answer (``run_datafusion``)."""
    try:
        return collect(frame.execute_stream(), frame.schema(), limits)
    except KymaError:
        raise
    except Exception as e:
        raise translate(e, limits) from None


def run_physical(
    ctx: SessionContext, plan: ExecutionPlan, schema: pa.Schema, limits: QueryLimits | None
) -> pa.Table:
    """A kept physical plan's answer (``_prepared.rerunnable``): its partitions one after
    the other, read without an event loop (a small table in memory: batches come at once),
    the statement's cancel and limits checked between batches."""
    try:
        return collect(_Partitions(ctx, plan), schema, limits, awaited=False)
    except KymaError:
        raise
    except Exception as e:
        raise translate(e, limits) from None


class _Partitions:
    """The batches of every partition of a physical plan, read or awaited in turn."""

    def __init__(self, ctx: SessionContext, plan: ExecutionPlan) -> None:
        self.ctx, self.plan = ctx, plan

    def __iter__(self) -> Iterator[Any]:
        for partition in range(self.plan.partition_count):
            yield from self.ctx.execute(self.plan, partition)

    async def _batches(self) -> AsyncIterator[Any]:
        for partition in range(self.plan.partition_count):
            async for batch in self.ctx.execute(self.plan, partition):
                yield batch

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._batches()


def open_stream(
    ctx: SessionContext, sql: str | DataFrame, limits: QueryLimits | None
) -> tuple[Any, pa.Schema]:
    """DataFusion's record-batch stream of a query (or a planned one), and the plan's
    schema; nothing read yet."""
    try:
        frame = ctx.sql(sql) if isinstance(sql, str) else sql
        return frame.execute_stream(), frame.schema()
    except KymaError:
        raise
    except Exception as e:
        raise translate(e, limits) from None


def stream_datafusion(
    ctx: SessionContext, sql: str, limits: QueryLimits | None = None
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The answer's schema and its batches as DataFusion computes them, for a consumer that
    keeps none (INSERT … SELECT): no result limits apply, memory holds a batch or two. The
    statement's cancel is checked between batches, and once more after the last."""
    try:
        frame = ctx.sql(sql)
        schema, stream = frame.schema(), frame.execute_stream()
    except KymaError:
        raise
    except Exception as e:
        raise translate(e, limits) from None

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            for batch in stream:
                checkpoint()
                arrow = batch.to_pyarrow()
                _running.add(rows_returned=arrow.num_rows)
                yield arrow
        except KymaError:
            raise
        except Exception as e:
            raise translate(e, limits) from None
        checkpoint()

    return schema, batches()


def translate(error: Exception, limits: QueryLimits | None = None) -> KymaError:
    """A DataFusion error as a kyma error: out of memory under ``limits`` →
    LimitExceededError; unknown names, bad text for a type, overflow and division by zero →
    their own classes (Postgres's SQLSTATEs); a subquery DataFusion cannot plan →
    UnsupportedStatementError; a kyma error raised in a UDF → its class; else SqlError."""
    message = str(error).strip()
    if limits is not None and _MEMORY in message:
        return memory_error(limits)
    if subquery := _UNPLANNED_SUBQUERY.search(message):
        return UnsupportedStatementError(
            f"this correlated subquery ({subquery.group(1)}) is not supported: correlate it"
            " by comparisons of columns in its WHERE, ANDed, and aggregate its one column"
        )
    for pattern in _KYMA_CAUSE:  # a kyma error raised in a UDF: its message, no traceback
        if cause := pattern.search(message):
            kind = getattr(errors, cause.group("kind"), None)
            if kind is errors.LimitExceededError:  # kyma_size_guard's
                return errors.LimitExceededError(cause.group("message"), "query_memory_bytes")
            if isinstance(kind, type) and issubclass(kind, SqlError):
                return kind(cause.group("message"))
            return SqlError(cause.group("message"))
    if unscoped := _unscoped(message):
        return unscoped
    for pattern, build in _KNOWN:
        if found := pattern.search(message):
            return build(found)
    return SqlError(_plain(message) or type(error).__name__)


# How DataFusion prefixes a message by where it failed: words for its developers.
_PREFIXES = re.compile(
    r"^(?:DataFusion error|Error during planning|Internal error|Execution error|Arrow error"
    r"|Optimizer rule '[^']*' failed|This feature is not implemented|Schema error): ?"
)


def _plain(message: str) -> str:
    """DataFusion's message without its wrapping: the innermost cause's first line, without
    the prefixes that say which part of DataFusion failed.

    >>> _plain("DataFusion error: type_coercion\\ncaused by\\nError during planning: Bad LIMIT")
    'Bad LIMIT'
    """
    inner = message.rsplit("caused by\n", 1)[-1].strip()
    line = inner.splitlines()[0] if inner else ""
    while (stripped := _PREFIXES.sub("", line, count=1)) != line:
        line = stripped
    return line


_QUALIFIED = re.compile(r"No field named (\w+)\.(\w+)\b.*?Valid fields are ([^\n]*)", re.S)


def _unscoped(message: str) -> NotFoundError | None:
    """``t.c`` where no relation ``t`` is in scope: a missing FROM entry, or (the common case
    in valid Postgres) a column of a query two levels out, which DataFusion does not read.

    >>> str(_unscoped("No field named o.id. Valid fields are x.id, x.v."))[:42]
    'missing FROM-clause entry for table "o" (a'
    >>> _unscoped("No field named o.nope. Valid fields are o.id, o.v.") is None
    True
    """
    found = _QUALIFIED.search(message)
    if found is None:
        return None
    table, valid = found.group(1), found.group(3)
    if any(field.strip().split(".")[0] == table for field in valid.split(",")):
        return None
    return NotFoundError(
        f'missing FROM-clause entry for table "{table}" (a subquery that reads a column two'
        " query levels out is not supported)"
    )
