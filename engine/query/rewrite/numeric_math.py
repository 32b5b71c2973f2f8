"""``sqrt``, ``power``, ``ln``, ``exp`` and ``log`` of a numeric are refused (0A000).

Postgres computes them in numeric, exactly to a scale of its own (``sqrt(2.0)`` is
``1.414213562373095049``, ``power(1.5, 2)`` is ``2.2500000000000000``); DataFusion computes
them as doubles, a different answer. Of integers and floats Postgres uses its double precision
variants too, and those are answered. Applied by ``postgres_semantics`` (it types the
statement): ``applies(typed)`` tells a call with a numeric argument (a decimal-typed value or
a literal with a point or an exponent), ``rule`` refuses it.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = annotate_types(sqlglot.parse_one("SELECT sqrt(2), sqrt(2.0), power(x, 0.5)"))
>>> [applies(node) for node in stmt.expressions]
[False, True, True]
>>> rule(stmt.expressions[1], stmt.expressions[1])
Traceback (most recent call last):
...
kyma.engine.errors.UnsupportedStatementError: 'SQRT(2.0)': sqrt of a numeric is computed in \
numeric by Postgres and is not supported; cast the argument to double precision
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError

CALLS = (exp.Sqrt, exp.Pow, exp.Ln, exp.Exp, exp.Log)
_NAMES = {exp.Sqrt: "sqrt", exp.Pow: "power", exp.Ln: "ln", exp.Exp: "exp", exp.Log: "log"}


def applies(typed: exp.Expression) -> bool:
    arguments = (typed.this, typed.args.get("expression"))
    return any(_numeric(a) for a in arguments if a is not None)


def rule(node: exp.Expression, _typed: exp.Expression) -> exp.Expression:
    raise UnsupportedStatementError(
        f"{node.sql('postgres')!r}: {_NAMES[type(node)]} of a numeric is computed in numeric"
        " by Postgres and is not supported; cast the argument to double precision"
    )


def _numeric(node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        return node.is_number and any(c in node.name for c in ".eE")
    return node.type is not None and node.type.this == exp.DataType.Type.DECIMAL
