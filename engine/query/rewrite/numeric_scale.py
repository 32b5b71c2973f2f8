"""``ceil``, ``floor`` and ``trunc`` of a numeric have Postgres's scale.

DataFusion keeps the operand's scale (``ceil(1.5)`` is ``2.0``, ``trunc(1.57, 1)`` is
``1.50``); Postgres gives ``ceil``, ``floor`` and ``trunc(x)`` scale 0 and ``trunc(x, n)``
scale ``n``, which shows in text (``'2'``, ``'1.5'``). The result is cast to that scale (the
value is already a whole number of such units: the cast is exact). Applied by
``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites one call
whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT trunc(CAST(x AS DECIMAL(9, 3)), 1)", read="postgres")
>>> node, typed = stmt.expressions[0], annotate_types(stmt.copy()).expressions[0]
>>> applies(typed), rule(node, typed).sql("postgres")
(True, 'CAST(TRUNC(CAST(x AS DECIMAL(9, 3)), 1) AS DECIMAL(38, 1))')
"""

from __future__ import annotations

from sqlglot import exp

_SCALED = (exp.Ceil, exp.Floor, exp.Trunc)


def applies(typed: exp.Ceil | exp.Floor | exp.Trunc) -> bool:
    """A numeric operand (a literal such as ``1.5`` too) and no other argument than a
    constant number of places for ``trunc``."""
    if not _numeric(typed.this) or typed.args.get("to") is not None:
        return False
    places = typed.args.get("decimals")
    if places is None:
        return True
    return isinstance(typed, exp.Trunc) and _places(places) is not None


def rule(node: exp.Ceil | exp.Floor | exp.Trunc, typed: exp.Expression) -> exp.Expression:
    places = node.args.get("decimals")
    scale = _places(places) if places is not None else 0
    return exp.Cast(this=node.copy(), to=exp.DataType.build(f"DECIMAL(38, {scale})"))


def _places(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Literal) and node.is_int and 0 <= int(node.name) <= 38:
        return int(node.name)
    return None


def _numeric(node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        return node.is_number and "." in node.name
    return node.type is not None and node.type.this == exp.DataType.Type.DECIMAL
