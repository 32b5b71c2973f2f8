"""A float division by zero is Postgres's 22012, not DataFusion's ``Infinity``.

The divisor of a division whose result is a ``real`` or a ``double precision`` goes through
``kyma_float4_divisor`` / ``kyma_float8_divisor`` (``pg_float_division``), which refuse a
zero divisor of a number. A double division divides doubles, as Postgres does (``1 / 0.5``
of an integer and a double); a real one (``real / real``) then takes float4's range check
from ``float4_typing``.

Applied by ``postgres_semantics`` (it types the statement): ``rule(node, typed)`` rewrites
one division whose typed twin ``applies``.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> stmt = sqlglot.parse_one("SELECT x / 2.5::float8, 7 / 2")
>>> typed = annotate_types(stmt.copy())
>>> [applies(t) for t in typed.expressions]
[True, False]
>>> rule(stmt.expressions[0], typed.expressions[0]).sql("postgres")
'CAST(x AS DOUBLE PRECISION) / KYMA_FLOAT8_DIVISOR(CAST(x AS DOUBLE PRECISION), \
CAST(2.5 AS DOUBLE PRECISION))'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query import pg_float_division
from kyma.engine.query.rewrite import float4_typing
from kyma.engine.query.rewrite.float_text import float_kind


def applies(typed: exp.Expression) -> bool:
    """Whether typed ``typed`` is a division whose result is a float."""
    return isinstance(typed, exp.Div) and float_kind(typed) is not None


def rule(node: exp.Expression, typed: exp.Expression) -> exp.Expression:
    """``node`` (a float division) refusing a zero divisor as Postgres does."""
    if float_kind(typed) == "float4":  # real / real
        return float4_typing.rule(_guarded(node, None, pg_float_division.FLOAT4), typed)
    return _guarded(node, "DOUBLE", pg_float_division.FLOAT8)


def _guarded(node: exp.Expression, to: str | None, function: str) -> exp.Expression:
    """``node`` with its operands cast ``to`` a type (None: kept) and its divisor checked
    (the copy keeps the division's flags: a Div made anew prints as a float division)."""
    guarded = node.copy()
    dividend, divisor = (
        exp.cast(o, to) if to else o for o in (guarded.this.copy(), guarded.expression.copy())
    )
    checked = exp.Anonymous(this=function.upper(), expressions=[dividend.copy(), divisor])
    guarded.set("this", dividend)
    guarded.set("expression", checked)
    return guarded
