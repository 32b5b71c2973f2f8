"""Postgres's typing of ``real`` (float4, DataFusion's Float32), by operand type.

- ``real op real`` is real, but ``real`` with an integer, a numeric or a double is double
  precision (DataFusion keeps Float32 next to an integer or a decimal): the real operand
  is cast to double first.
- ``sqrt``, ``ln``, ``ceil``, ``round``, the trigonometric functions and the others Postgres
  has for double precision only take a real as a double (DataFusion keeps Float32).
- ``sum`` of reals accumulates in float4 (``kyma_float4_sum``, ``pg_float4``).
- A cast to real of a double, a numeric or text refuses a value beyond float4's range
  (``kyma_float4``: 22003, as Postgres; DataFusion makes it infinity or zero).

Applied by ``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites
one node whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT x::real + 1, sum(x::real), sqrt(x::real), 2::real")
>>> typed = annotate_types(stmt.copy())
>>> for node, twin in zip(stmt.expressions, typed.expressions):
...     print(rule(node, twin).sql("postgres") if applies(twin) else node.sql("postgres"))
CAST(CAST(x AS REAL) AS DOUBLE PRECISION) + 1
KYMA_FLOAT4_SUM(CAST(x AS REAL))
SQRT(CAST(CAST(x AS REAL) AS DOUBLE PRECISION))
CAST(2 AS REAL)
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query import pg_float4
from kyma.engine.query.rewrite.float_text import float_kind

_T = exp.DataType.Type
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)
_DOUBLE_ONLY = (
    *(exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log, exp.Pow, exp.Ceil, exp.Floor, exp.Round),
    *(exp.Trunc, exp.Sign, exp.Degrees, exp.Radians, exp.Atan2, exp.Cot),
    *(exp.Sin, exp.Cos, exp.Tan, exp.Asin, exp.Acos, exp.Atan),
    *(exp.Sinh, exp.Cosh, exp.Tanh, exp.Asinh, exp.Acosh, exp.Atanh),
)
CALLS = (*_ARITHMETIC, *_DOUBLE_ONLY, exp.Sum, exp.Cast)
"""The node types this rule may rewrite."""


def applies(typed: exp.Expression) -> bool:
    """Whether typed ``typed`` computes with a real where DataFusion's answer differs."""
    if isinstance(typed, _ARITHMETIC):
        kinds = [float_kind(typed.left), float_kind(typed.right)]
        return "float4" in kinds and kinds != ["float4", "float4"]
    if isinstance(typed, _DOUBLE_ONLY):
        return any(float_kind(o) == "float4" for o in _arguments(typed))
    if isinstance(typed, exp.Sum):
        return float_kind(_summed(typed)) == "float4"
    if isinstance(typed, exp.Cast):
        return float_kind(typed) == "float4" and _may_leave_range(typed.this)
    return False


def rule(node: exp.Expression, typed: exp.Expression) -> exp.Expression:
    """``node`` computed as Postgres computes it with reals (see ``applies``)."""
    if isinstance(node, exp.Sum):
        return exp.Anonymous(this=pg_float4.SUM.upper(), expressions=[node.this.copy()])
    if isinstance(node, exp.Cast):
        double = exp.cast(node.this.copy(), "DOUBLE")
        return exp.Anonymous(this=pg_float4.CAST.upper(), expressions=[double, node.copy()])
    converted = node.copy()
    for operand, twin in zip(_arguments(converted), _arguments(typed), strict=True):
        if float_kind(twin) == "float4":
            operand.replace(exp.cast(operand.copy(), "DOUBLE"))
    return converted


def _arguments(node: exp.Expression) -> list[exp.Expression]:
    return [a for a in (node.this, node.args.get("expression")) if isinstance(a, exp.Expression)]


def _summed(node: exp.Sum) -> exp.Expression:
    value = node.this
    return value.expressions[0] if isinstance(value, exp.Distinct) else value


def _may_leave_range(value: exp.Expression) -> bool:
    """Whether a value cast to real may lie beyond float4's range (an integer or a real never
    does; a number literal is checked here)."""
    if float_kind(value) == "float4":
        return False
    if value.type is not None and value.type.this in exp.DataType.INTEGER_TYPES:
        return False
    if isinstance(value, exp.Literal) and value.is_number:
        size = abs(float(value.name))
        return size != 0 and not 1.2e-38 < size < 3.4e38
    return True
