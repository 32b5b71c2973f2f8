"""A panic inside DataFusion fails its statement, not the thread or process running it.

pyo3 raises a Rust panic as ``PanicException``, a BaseException that passes every
``except Exception`` on the way to the client. No SQL panics the installed DataFusion (the
issue's segfault is refused by the depth limit first), so the panic here is a real one
raised inside DataFusion's execution: a UDF raises pyo3's own PanicException, which pyo3
resumes as a Rust panic where DataFusion called it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from datafusion import SessionContext, udf

from kyma.engine.errors import EngineFailedError, error_code
from kyma.engine.query._datafusion import run_datafusion
from kyma.engine.query._limits import QueryGate, QueryLimits


def _panic_classes() -> list[type[BaseException]]:
    """pyo3's PanicException of every loaded pyo3 module (each has its own)."""
    found, stack = [], list(BaseException.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls.__module__ == "pyo3_runtime" and cls.__name__ == "PanicException":
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found


SQL = "SELECT explode(v) AS x FROM (VALUES (1)) t(v)"


def _panicking(panic: type[BaseException]) -> SessionContext:
    def explode(values: pa.Array) -> pa.Array:
        raise panic("index out of bounds: the len is 0 but the index is 0")

    context = SessionContext()
    context.register_udf(udf(explode, [pa.int64()], pa.int64(), "volatile", name="explode"))
    return context


@pytest.fixture
def ctx() -> SessionContext:
    """A session whose ``explode`` panics inside DataFusion: with datafusion's own
    PanicException, which escapes its call as a BaseException (the hole contained here)."""
    for panic in _panic_classes():
        context = _panicking(panic)
        try:
            for _ in context.sql(SQL).execute_stream():
                pass
        except Exception:  # another module's class: DataFusion reports it as an error
            continue
        except BaseException as e:
            assert type(e) is panic
            return context
    raise AssertionError("no PanicException made DataFusion panic")


@pytest.mark.parametrize("timeout", [0, 30])  # run inline, or in a statement thread
def test_panic_is_an_engine_error_and_the_next_statement_runs(
    ctx: SessionContext, timeout: float
) -> None:
    gate = QueryGate(QueryLimits(timeout_seconds=timeout))
    # In a statement thread the stream is awaited (to be cancellable): pyo3's async bridge
    # reports the panic without its message.
    said = "index out of bounds" if not timeout else "rust future panicked"
    for _ in range(3):
        with pytest.raises(EngineFailedError, match=f"DataFusion panicked: {said}"):
            gate.run(lambda: run_datafusion(ctx, SQL))
    assert gate.running == 0
    assert error_code(EngineFailedError("x")) == "engine_failed_error"
    answer = gate.run(lambda: run_datafusion(ctx, "SELECT 1 + 1 AS two"))
    assert answer.to_pylist() == [{"two": 2}]


def test_interrupts_still_pass(ctx: SessionContext) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        QueryGate(QueryLimits(timeout_seconds=0)).run(interrupted)
