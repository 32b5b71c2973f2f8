"""A float converted to text is written as Postgres writes it (``pg_float``), by operand type.

DataFusion writes ``2.0``, ``1e20``, ``1.5e-7``; Postgres ``2``, ``1e+20``, ``1.5e-07``. Every
conversion of a float to text goes through ``kyma_float8_text`` / ``kyma_float4_text``: a
cast to a text type (``x::text``, ``CAST(x AS varchar)``), an operand of ``||`` and an
argument of ``concat`` / ``concat_ws``. Applied by ``postgres_semantics`` (it types the
statement): ``rule(node, typed)`` rewrites one node whose typed twin ``applies``.

A float here is what is one in Postgres: a float column, a cast to ``real`` or ``double
precision``, arithmetic and functions over them, ``random()``, ``pi()``. A literal such as
``2.0`` is numeric in Postgres (sqlglot types it DOUBLE) and is left alone.

>>> import sqlglot
>>> from sqlglot.optimizer.annotate_types import annotate_types
>>> from sqlglot.optimizer.qualify import qualify
>>> schema = {"t": {"x": "DOUBLE"}}
>>> stmt = sqlglot.parse_one("SELECT x::text, x || 'a', 2.0 || 'b' FROM t")
>>> stmt = qualify(stmt, schema=schema, quote_identifiers=False)
>>> typed = annotate_types(stmt.copy(), schema=schema)
>>> for alias, twin in zip(stmt.expressions, typed.expressions):
...     node, twin = alias.this, twin.this
...     print(rule(node, twin).sql("postgres") if applies(twin) else node.sql("postgres"))
CAST(KYMA_FLOAT8_TEXT(CAST(t.x AS DOUBLE PRECISION)) AS TEXT)
KYMA_FLOAT8_TEXT(CAST(t.x AS DOUBLE PRECISION)) || 'a'
2.0 || 'b'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.pg_float import FLOAT4_TEXT, FLOAT8_TEXT

_T = exp.DataType.Type
_FLOATS = {_T.FLOAT: "float4", _T.DOUBLE: "float8"}
_FUNCTIONS = {"float4": FLOAT4_TEXT, "float8": FLOAT8_TEXT}
_TYPES = {"float4": "REAL", "float8": "DOUBLE"}
_KEEP = (exp.Paren, exp.Neg, exp.Abs, exp.Min, exp.Max, exp.Sum)
"""Of their operand's type (``abs(real)`` is real)."""
_MATH = (exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Pow, exp.Ceil, exp.Floor, exp.Round)
"""float8 over floats and integers (Postgres picks their float8 variant)."""
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)
_TEXT = {_T.TEXT, _T.VARCHAR, _T.CHAR, _T.NCHAR, _T.NVARCHAR, _T.BPCHAR}
_CONCATS = (exp.DPipe, exp.Concat, exp.ConcatWs)


def float_kind(node: exp.Expression) -> str | None:
    """``'float4'`` or ``'float8'`` if typed ``node`` is a float in Postgres, else None."""
    if isinstance(node, exp.Column):
        return _FLOATS.get(node.type.this) if node.type is not None else None
    if isinstance(node, exp.Cast | exp.TryCast):
        return None if node.to.expressions else _FLOATS.get(node.to.this)
    if isinstance(node, exp.Rand | exp.Pi):
        return "float8"
    if isinstance(node, _KEEP):
        return float_kind(node.this)
    if isinstance(node, exp.Avg):
        return "float8" if float_kind(node.this) else None
    if isinstance(node, _MATH):
        operands = [o for o in (node.this, node.args.get("expression")) if o is not None]
        if isinstance(node, exp.Round) and node.args.get("decimals") is not None:
            return None  # round(x, n) is numeric only
        return "float8" if all(_float_or_integer(o) for o in operands) else None
    if isinstance(node, _ARITHMETIC):
        kinds = {float_kind(node.left), float_kind(node.right)}
        if kinds == {"float4"}:
            return "float4"
        return "float8" if kinds & {"float4", "float8"} else None
    if isinstance(node, _CHOICES):
        kinds = {float_kind(choice) for choice in _choices(node)}
        return "float8" if "float8" in kinds else "float4" if "float4" in kinds else None
    return None


_CHOICES = (exp.Case, exp.Coalesce, exp.Greatest, exp.Least)
"""Of their widest float operand's type (``coalesce(real, 0)`` is real)."""


def _choices(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Case):
        choices = [*(branch.args["true"] for branch in node.args["ifs"]), node.args.get("default")]
    else:
        choices = [node.this, *node.expressions]
    return [choice for choice in choices if choice is not None]


def _float_or_integer(node: exp.Expression) -> bool:
    if float_kind(node) is not None:
        return True
    return node.type is not None and node.type.this in exp.DataType.INTEGER_TYPES


def applies(typed: exp.Expression) -> bool:
    """Whether typed ``typed`` converts a float to text."""
    if isinstance(typed, exp.Cast):
        return typed.to.this in _TEXT and float_kind(typed.this) is not None
    return any(float_kind(o) is not None for o in _operands(typed))


def rule(node: exp.Expression, typed: exp.Expression) -> exp.Expression:
    """``node`` with each float its typed twin converts to text written as Postgres does."""
    if isinstance(node, exp.Cast):
        return exp.Cast(this=_text(node.this, float_kind(typed.this)), to=node.to.copy())
    converted = node.copy()
    for operand, twin in zip(_operands(converted), _operands(typed), strict=True):
        if (kind := float_kind(twin)) is not None:
            operand.replace(_text(operand, kind))
    return converted


def may_apply(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` converts something to text and makes a float without a column
    (statements over float columns are typed anyway)."""
    if stmt.find(*_CONCATS) is None and not any(
        c.to.this in _TEXT for c in stmt.find_all(exp.Cast)
    ):
        return False
    floats = any(c.to.this in _FLOATS for c in stmt.find_all(exp.Cast, exp.TryCast))
    return floats or stmt.find(exp.Rand, exp.Pi, *_MATH) is not None


def _operands(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.DPipe):
        return [node.this, node.expression]
    if isinstance(node, exp.Concat | exp.ConcatWs):
        return list(node.expressions)
    return []


def _text(value: exp.Expression, kind: str | None) -> exp.Expression:
    assert kind is not None
    argument = exp.cast(value.copy(), _TYPES[kind])
    return exp.Anonymous(this=_FUNCTIONS[kind].upper(), expressions=[argument])
