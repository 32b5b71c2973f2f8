"""Result sizes of functions whose arguments are literals, checked before planning.

DataFusion's memory pool bounds its operators (sorts, joins, aggregates), not what a scalar
or table function builds: ``repeat('x', 2000000000)`` or ``range(1, 100000000)`` would
allocate gigabytes in one call. The known blow-up functions are estimated from their
literal arguments (nested calls too), and a statement whose estimate times ``COPIES`` (the
result is built, then copied into batches and the answer) passes the memory limit is
refused. Arguments that are not literals are not estimated.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from kyma.engine.errors import LimitExceededError

COPIES = 4
_ELEMENT = 8  # bytes of one int64 or float64


def _number(node: exp.Expression) -> float | None:
    negative = isinstance(node, exp.Neg)
    inner = node.this if negative else node
    if isinstance(inner, exp.Literal) and not inner.is_string:
        try:
            value = float(inner.this)
        except ValueError:
            return None
        return -value if negative else value
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
            raise LimitExceededError(
                f"{node.sql('postgres')[:80]} would build about {int(size)} bytes;"
                f" KYMA_QUERY_MEMORY_BYTES ({memory_bytes}) allows {memory_bytes // COPIES}"
                " per function result; make it smaller, or raise the limit",
                "query_memory_bytes",
            )
