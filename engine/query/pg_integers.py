"""Postgres's integer arithmetic and float-to-integer casts, as DataFusion functions.

DataFusion wraps integer ``+ - *`` on overflow; Postgres raises ``integer out of range``
(22003). ``kyma_add_int4(a, b)`` and its kin (add, sub, mul, neg, abs for int2, int4 and
int8) compute with Arrow's checked kernels over whole arrays. DataFusion also truncates a
float cast to an integer; Postgres rounds it half to even (``rint``): ``kyma_rint(x)``.
The rewrite rule ``postgres_semantics`` sends integer-typed operands to them, so float and
decimal arithmetic stay DataFusion's own.

>>> import pyarrow as pa
>>> add = checked("add", "int4")
>>> add(pa.array([1, None], pa.int32()), pa.array([2, 3], pa.int32())).to_pylist()
[3, None]
>>> checked("add", "int4")(pa.array([2**31 - 1], pa.int32()), pa.array([1], pa.int32()))
Traceback (most recent call last):
...
kyma.engine.errors.OutOfRangeError: integer out of range
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
from datafusion import SessionContext, udf
from datafusion.user_defined import ScalarUDF

from kyma.engine.errors import OutOfRangeError

TYPES = {"int2": pa.int16(), "int4": pa.int32(), "int8": pa.int64()}
"""Postgres's integer types, narrowest first, and the Arrow type each computes in."""
SQL_TYPES = {"int2": "SMALLINT", "int4": "INT", "int8": "BIGINT"}
_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint"}
_KERNELS: dict[str, Callable[..., pa.Array]] = {
    "add": pc.add_checked,
    "sub": pc.subtract_checked,
    "mul": pc.multiply_checked,
    "neg": pc.negate_checked,
    "abs": pc.abs_checked,
}
UNARY = {"neg", "abs"}


def function(operation: str, kind: str) -> str:
    """The SQL name of ``operation`` over Postgres's integer type ``kind``: kyma_add_int4."""
    return f"kyma_{operation}_{kind}"


def checked(operation: str, kind: str) -> Callable[..., pa.Array]:
    kernel = _KERNELS[operation]

    def compute(*operands: pa.Array) -> pa.Array:
        try:
            return kernel(*operands)
        except pa.ArrowInvalid:  # "overflow"
            raise OutOfRangeError(f"{_NAMES[kind]} out of range") from None

    return compute


def rint(values: pa.Array) -> pa.Array:
    """Half to even, as Postgres's float-to-integer casts round (``2.5`` → 2, ``3.5`` → 4)."""
    return pc.round(values, 0, round_mode="half_to_even")


def _functions() -> list[ScalarUDF]:
    made = [udf(rint, [pa.float64()], pa.float64(), "immutable", name="kyma_rint")]
    for operation in _KERNELS:
        for kind, arrow in TYPES.items():
            arity = 1 if operation in UNARY else 2
            name = function(operation, kind)
            made.append(
                udf(checked(operation, kind), [arrow] * arity, arrow, "immutable", name=name)
            )
    return made


_UDFS = _functions()


def register(ctx: SessionContext) -> None:
    """Add the checked integer functions and ``kyma_rint`` to a session (built once)."""
    for made in _UDFS:
        ctx.register_udf(made)
