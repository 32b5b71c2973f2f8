"""``SELECT pg_cancel_backend(pid)`` and ``SELECT pg_terminate_backend(pid [, timeout])``,
as Postgres 15 answers them (its signalfuncs.c): a boolean a call, a WARNING and false for a
pid that is no backend, 42501 for another's backend without ``admin``.

A pid is a Postgres protocol session's (``pg_stat_activity``), or minus the number of a
statement running over another interface (``-12`` is ``q12``), which has no session to
terminate: ``pg_terminate_backend`` stops it, as ``pg_cancel_backend`` does. Stopping takes
the path ``KILL QUERY`` takes (the query log says who stopped what). kyma runs these calls
as statements of their own, read from the parsed tree: one call a column, no FROM.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from kyma.engine.errors import (
    InvalidTextError,
    OutOfRangeError,
    PermissionDeniedError,
    QueryCancelledError,
    UndefinedFunctionError,
    UnsupportedStatementError,
)
from kyma.engine.query import Caller, QueryResult
from kyma.engine.query._running import Statement, current_caller, current_statement
from kyma.pgwire._backends import Backends

CANCEL, TERMINATE = "pg_cancel_backend", "pg_terminate_backend"
_ARITY = {CANCEL: (1,), TERMINATE: (1, 2)}
_REFUSED = {
    CANCEL: "must be a member of the role whose query is being canceled"
    " or member of pg_signal_backend",
    TERMINATE: "must be a member of the role whose process is being terminated"
    " or member of pg_signal_backend",
}
_INT4 = (-(1 << 31), (1 << 31) - 1)


def _call(projection: exp.Expression) -> tuple[str, exp.Anonymous] | None:
    """(column name, call) of ``pg_cancel_backend(…)`` or ``pg_catalog.pg_…(…)``."""
    call = projection.unalias()
    if isinstance(call, exp.Dot) and call.this.name.lower() == "pg_catalog":
        call = call.expression
    if not isinstance(call, exp.Anonymous) or call.name.lower() not in _ARITY:
        return None
    return projection.alias_or_name if isinstance(projection, exp.Alias) else call.name, call


def statement(stmt: exp.Expression, backends: Backends) -> Callable[[], QueryResult] | None:
    """What runs ``SELECT pg_cancel_backend(12), …`` (only such calls, nothing else), or None."""
    if not isinstance(stmt, exp.Select) or not stmt.expressions:
        return None
    if any(value for key, value in stmt.args.items() if key != "expressions"):
        return None  # a FROM, WHERE, LIMIT…: the planner's (and the functions refuse there)
    calls = [_call(projection) for projection in stmt.expressions]
    if any(call is None for call in calls):
        return None
    return lambda: _run([c for c in calls if c is not None], backends)


def _run(calls: list[tuple[str, exp.Anonymous]], backends: Backends) -> QueryResult:
    caller, warnings = current_caller(), list[str]()
    arguments = []
    for _, call in calls:
        function = call.name.lower()
        if len(call.expressions) not in _ARITY[function]:
            count = len(call.expressions)
            raise UndefinedFunctionError(
                f"function {function}() with {count} arguments does not exist"
            )
        arguments.append([_int(argument, function) for argument in call.expressions])
    answers = []
    for (_, call), values in zip(calls, arguments, strict=True):
        pid, timeout = values[0], values[1] if len(values) > 1 else 0
        answer = None
        if pid is not None and timeout is not None:
            answer = _signal(call.name.lower(), pid, timeout, caller, backends, warnings)
        answers.append(pa.array([answer], pa.bool_()))
    table = pa.Table.from_arrays(answers, names=[name for name, _ in calls])  # names may repeat
    return QueryResult(table, "SELECT", warnings=warnings)


def _int(argument: exp.Expression, function: str) -> int | None:
    """An argument's value: an integer literal (or a string of one) in int4's range, or NULL."""
    if isinstance(argument, exp.Null):
        return None
    negative = isinstance(argument, exp.Neg)
    literal = argument.this if negative else argument
    if not isinstance(literal, exp.Literal):
        raise UnsupportedStatementError(
            f"{function}({argument.sql('postgres')}): kyma runs {function} with integer"
            f" literals, as in SELECT {function}(12345)"
        )
    text = literal.name.strip()
    if literal.is_string and not text.lstrip("+-").isdigit():
        raise InvalidTextError(f'invalid input syntax for type integer: "{literal.name}"')
    if not literal.is_string and not text.isdigit():
        raise UndefinedFunctionError(f"function {function}(numeric) does not exist")
    value = -int(text) if negative else int(text)
    if not _INT4[0] <= value <= _INT4[1]:
        raise UndefinedFunctionError(f"function {function}(bigint) does not exist")
    return value


def _signal(
    function: str, pid: int, timeout: int, caller: Caller, backends: Backends, warnings: list[str]
) -> bool:
    if timeout < 0:
        raise OutOfRangeError('"timeout" must not be negative')
    backend = backends.get(pid) if pid > 0 else None
    running = backends.statement(pid) if pid > 0 else _numbered(backends, -pid)
    owner = backend.caller.principal if backend else running.caller.principal if running else None
    if owner is None:
        warnings.append(f"PID {pid} is not a PostgreSQL backend process")
        return False
    if not caller.admin and owner != caller.principal:
        raise PermissionDeniedError(_REFUSED[function], scope="admin")
    own = running is not None and running is current_statement()
    if function == TERMINATE and backend is not None:
        backends.terminate(backend, caller)
        if timeout and not own and not backend.ended.wait(timeout / 1000):
            late = f"backend with PID {pid} did not terminate within {timeout} milliseconds"
            warnings.append(late)
            return False
    elif running is not None:
        backends.running.stop(running.id, caller)
    if own:  # the caller's own statement: it ends here, as Postgres's does
        raise QueryCancelledError("canceling statement due to user request")
    return True


def _numbered(backends: Backends, number: int) -> Statement | None:
    return next((s for s in backends.running.all() if s.number == number), None)
