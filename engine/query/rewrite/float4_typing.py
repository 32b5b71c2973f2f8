"""Postgres's typing of ``real`` (float4, DataFusion's Float32), by operand type.

- ``real op real`` is real, but ``real`` with an integer, a numeric or a double is double
  precision (DataFusion keeps Float32 next to an integer or a decimal): the real operand
  is cast to double first. So is a real compared with an integer or a numeric
  (``16777217 = 16777217::real`` is false). ``real op real`` that overflows is 22003
  (``kyma_float4``; DataFusion answers infinity).
- A real cast to numeric is refused (0A000): Postgres keeps 6 significant digits.
- ``sqrt``, ``ln``, ``ceil``, ``round``, the trigonometric functions and the others Postgres
  has for double precision only take a real as a double (DataFusion keeps Float32).
- ``x IN (0.1, 2)`` of a real ``x`` compares reals: Postgres types a list of a real and
  numbers as real (a double in it makes it double precision).
- ``sum`` of reals accumulates in float4 (``kyma_float4_sum``, ``pg_float4``).
- A cast to real of a double, a numeric or text refuses a value beyond float4's range
  (``kyma_float4``: 22003, as Postgres; DataFusion makes it infinity or zero).

Applied by ``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites
one node whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> sql = "SELECT x::real + 1, sum(x::real), sqrt(x::real), 2::real, y::real * 2::real"
>>> sql += ", x::real IN (0.1, 2)"
>>> stmt = sqlglot.parse_one(sql)
>>> typed = annotate_types(stmt.copy())
>>> for node, twin in zip(stmt.expressions, typed.expressions):
...     print(rule(node, twin).sql("postgres") if applies(twin) else node.sql("postgres"))
CAST(CAST(x AS REAL) AS DOUBLE PRECISION) + 1
KYMA_FLOAT4_SUM(CAST(x AS REAL))
SQRT(CAST(CAST(x AS REAL) AS DOUBLE PRECISION))
CAST(2 AS REAL)
KYMA_FLOAT4(CAST(CAST(y AS REAL) AS DOUBLE PRECISION) * CAST(CAST(2 AS REAL) AS DOUBLE \
PRECISION), CAST(y AS REAL) * CAST(2 AS REAL))
CAST(x AS REAL) IN (CAST(0.1 AS REAL), CAST(2 AS REAL))
"""

from __future__ import annotations

import math

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query import pg_float4
from kyma.engine.query.rewrite.float_text import float_kind

_T = exp.DataType.Type
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
_DOUBLE_ONLY = (
    *(exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log, exp.Pow, exp.Ceil, exp.Floor, exp.Round),
    *(exp.Trunc, exp.Sign, exp.Degrees, exp.Radians, exp.Atan2, exp.Cot),
    *(exp.Sin, exp.Cos, exp.Tan, exp.Asin, exp.Acos, exp.Atan),
    *(exp.Sinh, exp.Cosh, exp.Tanh, exp.Asinh, exp.Acosh, exp.Atanh),
)
CALLS = (*_ARITHMETIC, *_COMPARISONS, *_DOUBLE_ONLY, exp.Sum, exp.Cast, exp.In)
"""The node types this rule may rewrite."""


def applies(typed: exp.Expression) -> bool:
    """Whether typed ``typed`` computes with a real where DataFusion's answer differs."""
    if isinstance(typed, _ARITHMETIC):
        return "float4" in (float_kind(typed.left), float_kind(typed.right))
    if isinstance(typed, _COMPARISONS):  # DataFusion compares a real and a double as doubles
        kinds = {float_kind(typed.left), float_kind(typed.right)}
        return "float4" in kinds and not kinds & {"float8"} and len(kinds) == 2
    if isinstance(typed, _DOUBLE_ONLY):
        return any(float_kind(o) == "float4" for o in _arguments(typed))
    if isinstance(typed, exp.In):
        items = typed.expressions
        if float_kind(typed.this) != "float4" or any(float_kind(i) == "float8" for i in items):
            return False
        return any(_number(item) for item in items)
    if isinstance(typed, exp.Sum):
        return float_kind(_summed(typed)) == "float4"
    if isinstance(typed, exp.Cast) and typed.to.this == _T.DECIMAL:
        return float_kind(typed.this) == "float4"
    if isinstance(typed, exp.Cast):
        return float_kind(typed) == "float4" and _may_leave_range(typed.this)
    return False


def rule(node: exp.Expression, typed: exp.Expression) -> exp.Expression:
    """``node`` computed as Postgres computes it with reals (see ``applies``)."""
    if isinstance(node, exp.In):
        listed = node.copy()
        for item, twin in zip(listed.expressions, typed.expressions, strict=True):
            if _number(twin):
                real = exp.cast(item.copy(), "REAL")
                wide = exp.cast(item.copy(), "DOUBLE")
                item.replace(_checked(wide, real) if _may_leave_range(twin) else real)
        return listed
    if isinstance(node, exp.Sum):
        return exp.Anonymous(this=pg_float4.SUM.upper(), expressions=[node.this.copy()])
    if isinstance(node, exp.Cast) and node.to.this == _T.DECIMAL:
        raise UnsupportedStatementError(
            f"{node.sql('postgres')!r}: Postgres keeps 6 significant digits of a real cast to"
            " numeric; not supported"
        )
    if isinstance(node, exp.Cast):
        return _checked(exp.cast(node.this.copy(), "DOUBLE"), node.copy())
    if isinstance(node, _ARITHMETIC) and float_kind(typed) == "float4":  # real op real
        wide = node.copy()
        for operand in _arguments(wide):
            operand.replace(exp.cast(operand.copy(), "DOUBLE"))
        return _checked(wide, node.copy())
    converted = node.copy()
    for operand, twin in zip(_arguments(converted), _arguments(typed), strict=True):
        if float_kind(twin) == "float4":
            operand.replace(exp.cast(operand.copy(), "DOUBLE"))
    return converted


def _checked(double: exp.Expression, real: exp.Expression) -> exp.Expression:
    """``real``, refused where ``double`` (the same value computed in double precision) is
    beyond float4's range."""
    return exp.Anonymous(this=pg_float4.CAST.upper(), expressions=[double, real])


def _arguments(node: exp.Expression) -> list[exp.Expression]:
    return [a for a in (node.this, node.args.get("expression")) if isinstance(a, exp.Expression)]


def _number(typed: exp.Expression) -> bool:
    """Whether typed ``typed`` is an integer or a numeric (a number literal is one)."""
    if isinstance(typed, exp.Literal | exp.Neg):
        return typed.is_number
    kind = typed.type.this if typed.type is not None else None
    return kind in exp.DataType.INTEGER_TYPES or kind == _T.DECIMAL


def _summed(node: exp.Sum) -> exp.Expression:
    value = node.this
    return value.expressions[0] if isinstance(value, exp.Distinct) else value


def _may_leave_range(value: exp.Expression) -> bool:
    """Whether a value cast to real may lie beyond float4's range (an integer or a real never
    does; a literal is checked here)."""
    if float_kind(value) == "float4":
        return False
    if value.type is not None and value.type.this in exp.DataType.INTEGER_TYPES:
        return False
    if isinstance(value, exp.Literal):  # a constant is checked here, not row by row
        try:
            size = abs(float(value.name))
        except ValueError:
            return True  # bad text: DataFusion's cast names it
        return math.isfinite(size) and size != 0 and not 1.2e-38 < size < 3.4e38
    return True
