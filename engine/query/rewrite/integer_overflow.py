"""Integer arithmetic in Postgres's result types, checked: ``+ - *``, unary minus and ``abs``
of integers compute in the wider operand's type (int2, int4, int8; a literal is int4 when it
fits), over wider operands (bigint for int2 and int4, decimal(38, 0) for int8, where no result
overflows), then cast back, and that cast fails out of range (22003) where DataFusion would
wrap. Constants are folded as Postgres folds them. Applied by ``postgres_semantics`` (it types
the statement): ``applies(typed)`` tells an operation of integers, ``rule`` rewrites it.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> typed = annotate_types(sqlglot.parse_one("SELECT 2 + 3, 2147483647 + 1, x + 1.5"))
>>> [applies(node) for node in typed.expressions]
[True, True, False]
>>> rule(typed.expressions[0], typed.expressions[0]).sql()
'5'
>>> rule(typed.expressions[1], typed.expressions[1]).sql()  # fails when evaluated: 22003
'CAST(CAST(2147483647 AS BIGINT) + CAST(1 AS BIGINT) AS INT)'
"""

from __future__ import annotations

from sqlglot import exp

_RANKS = {"int2": 0, "int4": 1, "int8": 2}
_LITERAL_KINDS = ((2**31, "int4"), (2**63, "int8"))  # below: int4, int8; else numeric
_INTEGER_KINDS = {
    exp.DataType.Type.TINYINT: "int2",
    exp.DataType.Type.SMALLINT: "int2",
    exp.DataType.Type.INT: "int4",
    exp.DataType.Type.BIGINT: "int8",
}


def integer_kind(node: exp.Expression) -> str | None:
    """Postgres's integer type of a typed node (``int2``, ``int4``, ``int8``), else None: a
    literal by its value (sqlglot types every integer literal INT), a column by its type."""
    value = literal_value(node)
    if value is not None:
        return next((kind for bound, kind in _LITERAL_KINDS if -bound <= value < bound), None)
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod | exp.Neg | exp.Abs):
        return _integer_result(node)  # sqlglot types ``3000000000 - 1`` INT
    return _INTEGER_KINDS.get(node.type.this) if node.type is not None else None


def literal_value(node: exp.Expression) -> int | None:
    """An integer literal's value with the minus signs before it: Postgres folds them into
    the constant (``-2147483648`` is an int4, ``-(-2147483648)`` the int8 2147483648)."""
    negative = False
    while isinstance(node, exp.Paren | exp.Neg):
        negative ^= isinstance(node, exp.Neg)
        node = node.this
    if not isinstance(node, exp.Literal) or not node.is_int:
        return None
    if len(node.name.lstrip("0")) > _DIGITS:  # past every integer type, and int() limits
        return -(10**_DIGITS) if negative else 10**_DIGITS
    return -int(node.name) if negative else int(node.name)


def _integer_result(node: exp.Expression) -> str | None:
    """The integer type an operation of integers computes in (None: not all integers, or a
    constant such as ``-1``)."""
    if isinstance(node, exp.Neg) and literal_value(node) is not None:
        return None
    operands = [node.this] if isinstance(node, exp.Neg | exp.Abs) else [node.left, node.right]
    kinds = [integer_kind(o) for o in operands]
    if None in kinds:
        return None
    return max(kinds, key=lambda k: _RANKS[k])  # type: ignore[arg-type]


WIDER = {"int2": "BIGINT", "int4": "BIGINT", "int8": "DECIMAL(38, 0)"}
_TARGET = {"int2": "SMALLINT", "int4": "INT", "int8": "BIGINT"}


def rule(node: exp.Expression, typed: exp.Expression) -> exp.Expression:
    """The operation over wider operands, cast back to its type: the cast is the check. Of
    constants, its value when that fits (a deep expression of casts takes DataFusion minutes
    to plan); one out of range is left to fail when evaluated, as in Postgres."""
    kind = _integer_result(typed)
    assert kind is not None
    folded = _folded(node, kind)
    if folded is not None:
        return folded
    if isinstance(node, exp.Neg | exp.Abs):
        computed = type(node)(this=exp.cast(node.this.copy(), WIDER[kind]))
        return exp.cast(computed, _TARGET[kind])
    return checked(type(node), node.left.copy(), node.right.copy(), kind)


def checked(
    operator: type[exp.Binary], left: exp.Expression, right: exp.Expression, kind: str
) -> exp.Expression:
    """``left <operator> right`` over wider operands, cast back to ``kind`` (the check)."""
    computed = operator(this=exp.cast(left, WIDER[kind]), expression=exp.cast(right, WIDER[kind]))
    return exp.cast(computed, _TARGET[kind])


_FOLD = {
    exp.Add: lambda a, b: a + b,
    exp.Sub: lambda a, b: a - b,
    exp.Mul: lambda a, b: a * b,
    exp.Neg: lambda a: -a,
    exp.Abs: abs,
}
_BOUNDS = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_DIGITS = 20  # an integer literal longer than this is no int8: numeric


def _folded(node: exp.Expression, kind: str) -> exp.Expression | None:
    """The value of an operation of integer constants as a constant of type ``kind``
    (an int8 as a cast: a literal that fits int4 would be one), or None."""
    operands = [node.this] if isinstance(node, exp.Neg | exp.Abs) else [node.left, node.right]
    values = [literal_value(o) for o in operands]
    if None in values:
        return None
    value = _FOLD[type(node)](*values)
    if not -_BOUNDS[kind] <= value < _BOUNDS[kind]:
        return None
    literal = exp.Literal.number(value)
    return exp.cast(literal, "BIGINT") if kind == "int8" else literal


def is_int4_constant(cast: exp.Cast) -> bool:
    """``CAST(70 AS INTEGER)``: an integer constant cast to int4, which it fits."""
    value = literal_value(cast.this)
    return cast.to.this == exp.DataType.Type.INT and value is not None and -(2**31) <= value < 2**31


def int4_constant(node: exp.Cast, _typed: exp.Cast) -> exp.Expression:
    """The constant itself (an int4 by its value), as Postgres folds it: DataFusion takes
    minutes to plan an aggregate of a constant under a deep chain of casts."""
    value = literal_value(node.this)
    if value is None:
        return node.copy()
    int32 = exp.Literal.string("Int32")  # still an int4 to clients (a bare literal is int8)
    return exp.Anonymous(this="arrow_cast", expressions=[exp.Literal.number(value), int32])


def applies(typed: exp.Expression) -> bool:
    return _integer_result(typed) is not None
