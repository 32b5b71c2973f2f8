"""``sqrt``, ``power``, ``ln``, ``exp`` and ``log`` of a numeric are refused (0A000).

Postgres computes them in numeric, exactly to a scale of its own (``sqrt(2.0)`` is
``1.414213562373095049``, ``power(1.5, 2)`` is ``2.2500000000000000``); DataFusion computes
them as doubles, a different answer. Of integers and floats Postgres uses its double precision
variants too, and those are answered. ``log(b, x)`` exists in numeric only (of integers
too: ``log(2, 8)`` is ``3.0000000000000000``): of two constants it is computed as Postgres
does (``pg_log``), else refused. Applied by ``postgres_semantics`` (it types the
statement): ``applies(typed)`` tells a call with a numeric argument (a decimal-typed value or
a literal with a point or an exponent) or a ``log`` of two, ``rule`` folds or refuses it.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = annotate_types(sqlglot.parse_one("SELECT sqrt(2), sqrt(2.0), power(x, 0.5)"))
>>> [applies(node) for node in stmt.expressions]
[False, True, True]
>>> rule(*[sqlglot.parse_one("log(2, 8.0)", read="postgres")] * 2).sql("postgres")
"CAST('3.0000000000000000' AS DECIMAL(17, 16))"
>>> rule(stmt.expressions[1], stmt.expressions[1])
Traceback (most recent call last):
...
kyma.engine.errors.UnsupportedStatementError: 'SQRT(2.0)': sqrt of a numeric is computed in \
numeric by Postgres and is not supported; cast the argument to double precision
"""

from __future__ import annotations

from decimal import Decimal

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError
from kyma.engine.query.pg_log import log
from kyma.engine.query.rewrite.numeric_literals import exact

CALLS = (exp.Sqrt, exp.Pow, exp.Ln, exp.Exp, exp.Log)
_NAMES = {exp.Sqrt: "sqrt", exp.Pow: "power", exp.Ln: "ln", exp.Exp: "exp", exp.Log: "log"}


def applies(typed: exp.Expression) -> bool:
    arguments = (typed.this, typed.args.get("expression"))
    return _of_two(typed) or any(_numeric(a) for a in arguments if a is not None)


def rule(node: exp.Expression, _typed: exp.Expression) -> exp.Expression:
    if _of_two(node):
        base, value = _constant(node.this), _constant(node.expression)
        if base is not None and value is not None:
            return exact(format(log(base, value), "f"))
        raise UnsupportedStatementError(
            f"{node.sql('postgres')!r}: log(b, x) is computed in numeric by Postgres and is"
            " supported of constants only; for a double precision logarithm write ln(x) / ln(b)"
        )
    raise UnsupportedStatementError(
        f"{node.sql('postgres')!r}: {_NAMES[type(node)]} of a numeric is computed in numeric"
        " by Postgres and is not supported; cast the argument to double precision"
    )


def _of_two(node: exp.Expression) -> bool:
    return isinstance(node, exp.Log) and node.args.get("expression") is not None


def _constant(node: exp.Expression) -> Decimal | None:
    """A number literal's value, written or made exact (``CAST('2.0' AS DECIMAL(2, 1))``),
    with its minus signs; else None."""
    negative = False
    while isinstance(node, exp.Paren | exp.Neg):
        negative ^= isinstance(node, exp.Neg)
        node = node.this
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DECIMAL:
        node = node.this
    if not isinstance(node, exp.Literal) or not (node.is_number or node.is_string):
        return None
    try:
        value = Decimal(node.name)
    except ArithmeticError:
        return None
    return -value if negative else value


def _numeric(node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        return node.is_number and any(c in node.name for c in ".eE")
    return node.type is not None and node.type.this == exp.DataType.Type.DECIMAL
