"""Result sizes of functions that build as much as an argument says, bounded twice.

Before planning, from literal arguments: ``check_functions``. While running, from the
actual values: ``rewrite/size_guards`` wraps each size argument in ``kyma_size_guard``
(registered by ``register_guard``), which refuses a batch of rows whose results would pass
the per-function budget before the function allocates them.

DataFusion's memory pool bounds its operators (sorts, joins, aggregates), not what a scalar
or table function builds: ``repeat('x', 2000000000)`` or ``range(1, 100000000)`` would
allocate gigabytes in one call. The known blow-up functions are estimated from their
literal arguments (nested calls too), and a statement whose estimate times ``COPIES`` (the
result is built, then copied into batches and the answer) passes the memory limit is
refused. Arguments that are not literals are not estimated.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datafusion import SessionContext, udf
from sqlglot import exp

from kyma.engine.errors import LimitExceededError

COPIES = 4
_ELEMENT = 8  # bytes of one int64 or float64


_ARITHMETIC: dict[type, Callable[[float, float], float]] = {
    exp.Add: lambda a, b: a + b,
    exp.Sub: lambda a, b: a - b,
    exp.Mul: lambda a, b: a * b,
    exp.Div: lambda a, b: a / b if b else float("nan"),
}


def _number(node: exp.Expression) -> float | None:
    """The value of a numeric literal, or of arithmetic, parentheses and casts over them."""
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    if isinstance(node, exp.Neg | exp.Paren | exp.Cast):
        inner = _number(node.this)
        return -inner if inner is not None and isinstance(node, exp.Neg) else inner
    operation = _ARITHMETIC.get(type(node))
    if operation is not None:
        left, right = _number(node.this), _number(node.expression)
        if left is not None and right is not None:
            value = operation(left, right)
            return value if value == value else None  # NaN: a division by zero
    return None


def _args(node: exp.Expression) -> list[exp.Expression]:
    """A call's arguments in order, whatever node sqlglot made of it."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    keys = [k for k in node.arg_types if node.args.get(k) is not None]
    out: list[exp.Expression] = []
    for key in keys:
        value = node.args[key]
        out.extend(value if isinstance(value, list) else [value])
    return out


def _repeat(args: list[exp.Expression]) -> float | None:
    if len(args) != 2 or (times := _number(args[1])) is None:
        return None
    return size_of(args[0]) * max(times, 0)


def _pad(args: list[exp.Expression]) -> float | None:
    if len(args) < 2 or (length := _number(args[1])) is None:
        return None
    return 4 * max(length, 0)  # characters of up to 4 bytes


def _series(args: list[exp.Expression]) -> float | None:
    numbers = [_number(a) for a in args[:3]]
    if not 1 <= len(numbers) <= 3 or None in numbers:
        return None
    start, stop, step = (0.0, numbers[0], 1.0) if len(numbers) == 1 else (*numbers[:2], 1.0)
    if len(numbers) == 3:
        step = numbers[2]
    if not step:
        return None
    return _ELEMENT * max((stop - start) / step, 0)  # type: ignore[operator]


_SIZES: dict[str, Callable[[list[exp.Expression]], float | None]] = {
    "repeat": _repeat,
    "lpad": _pad,
    "rpad": _pad,
    "pad": _pad,
    "range": _series,
    "generate_series": _series,
    "exploding_generate_series": _series,
}


def _name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else ""


def size_of(node: exp.Expression) -> float:
    """Bytes ``node`` evaluates to per row, as far as literals tell (0 when unknown)."""
    if isinstance(node, exp.Literal):
        return len(node.this)
    estimate = _SIZES.get(_name(node))
    if estimate is not None:
        return estimate(_args(node)) or 0
    if isinstance(node, exp.Func | exp.DPipe | exp.Paren):
        return sum(size_of(child) for child in _args(node))
    return 0


def check_functions(stmt: exp.Expression, memory_bytes: int) -> None:
    """LimitExceededError when one function's estimated result passes ``memory_bytes``."""
    if not memory_bytes:
        return
    for node in stmt.find_all(exp.Func):
        if _name(node) not in _SIZES:
            continue
        size = size_of(node)
        if size * COPIES > memory_bytes:
            raise too_large(node.sql("postgres")[:80], size, memory_bytes)


def too_large(what: str, size: float, memory_bytes: int, where: str = "") -> LimitExceededError:
    """The error of a function result past its share of ``memory_bytes``."""
    return LimitExceededError(
        f"{what} would build about {int(size)} bytes{where};"
        f" KYMA_QUERY_MEMORY_BYTES ({memory_bytes}) allows {memory_bytes // COPIES}"
        " per function result; make it smaller, or raise the limit",
        "query_memory_bytes",
    )


GUARD = "kyma_size_guard"  # wrapped around size arguments by rewrite/size_guards
SERIES_GUARD = "kyma_series_guard"  # decides whether range/generate_series may run
GUARDS = frozenset({GUARD, SERIES_GUARD})


def _numbers(values: pa.Array) -> np.ndarray:
    return pc.fill_null(values, 0).to_numpy(zero_copy_only=False).astype(np.float64)


def register_guard(ctx: SessionContext, memory_bytes: int) -> None:
    """``kyma_size_guard(count, unit_bytes, name)``: ``count`` unchanged, unless the batch's
    ``count × unit_bytes`` summed over its rows passes ``memory_bytes / COPIES`` (0: never).

    ``kyma_series_guard(start, stop, step, name)``: true, unless the batch's series
    (``range``/``generate_series`` from ``start`` to ``stop`` by ``step``) of 8-byte numbers
    would pass that budget; ``CASE WHEN`` it, the series is built only after it passed."""
    budget = memory_bytes // COPIES

    def check(size: float, name: pa.Array) -> None:
        if budget and size > budget:
            raise too_large(name[0].as_py(), size, memory_bytes, " in one batch of rows")

    def guard(count: pa.Array, unit: pa.Array, name: pa.Array) -> pa.Array:
        check(float((np.maximum(_numbers(count), 0) * np.maximum(_numbers(unit), 0)).sum()), name)
        return count

    def series(start: pa.Array, stop: pa.Array, step: pa.Array, name: pa.Array) -> pa.Array:
        steps = _numbers(step)
        with np.errstate(divide="ignore", invalid="ignore"):
            counts = np.where(steps != 0, (_numbers(stop) - _numbers(start)) / steps + 1, 0)
        check(_ELEMENT * float(np.maximum(counts, 0).sum()), name)
        return pa.array(np.ones(len(start), dtype=bool))

    # Immutable: DataFusion folds them on constants and shares them between equal expressions.
    ctx.register_udf(
        udf(guard, [pa.int64(), pa.int64(), pa.string()], pa.int64(), "immutable", name=GUARD)
    )
    numbers = [pa.float64(), pa.float64(), pa.float64(), pa.string()]
    ctx.register_udf(udf(series, numbers, pa.bool_(), "immutable", name=SERIES_GUARD))
