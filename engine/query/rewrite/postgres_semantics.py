"""Postgres's answers for operations that DataFusion computes differently, by operand type.

- A quotient of decimals (or of a decimal and an integer) and an average of decimals call
  ``kyma_numeric_div`` / ``kyma_numeric_avg`` (``pg_numeric``), which round as Postgres
  does; DataFusion's own operators truncate at a fixed scale.
- MIN and MAX of floats treat NaN as Postgres does, greater than every number (DataFusion
  skips it, and its grouped MIN mixes NaN into wrong answers).

Operand types come from sqlglot's type annotation over ``schema`` (``{table: {column: SQL
type}}``); a statement sqlglot cannot annotate is left as it is.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT avg(x), sum(x) / count(*), avg(f) FROM t", read="postgres")
>>> rule(stmt, {"t": {"x": "DECIMAL(15,2)", "f": "DOUBLE"}}).sql("postgres")
'SELECT KYMA_NUMERIC_AVG(CAST(x AS DECIMAL(38, 10)), ARROW_TYPEOF(x)), \
KYMA_NUMERIC_DIV(CAST(SUM(x) AS DECIMAL(38, 10)), CAST(COUNT(*) AS DECIMAL(38, 10)), \
ARROW_TYPEOF(SUM(x)), ARROW_TYPEOF(COUNT(*))), AVG(f) FROM t'
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot.errors
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

_DECIMAL = exp.DataType.Type.DECIMAL
_FLOATS = {exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE}
_ARGUMENT = exp.DataType.build("DECIMAL(38, 10)")


def rule(stmt: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    if not any(_sensitive_type(t) for columns in schema.values() for t in columns.values()) and (
        not any(_decimal_cast(c) for c in stmt.find_all(exp.Cast))
    ):
        return stmt
    try:
        typed = annotate_types(
            qualify(stmt.copy(), schema=schema, dialect="postgres", quote_identifiers=False),
            schema=schema,
            dialect="postgres",
        )
    except (sqlglot.errors.SqlglotError, KeyError, ValueError):
        return stmt
    chosen = {
        _key(node): rewrite
        for node in typed.find_all(*_REWRITES)
        for applies, rewrite in [_REWRITES[type(node)]]
        if applies(node)
    }
    # Rewrite the statement as written (its output names stay), innermost nodes first.
    for node in reversed(list(stmt.find_all(*_REWRITES))):
        rewrite = chosen.get(_key(node))
        if rewrite is not None:
            node.replace(rewrite(node))
    return stmt


def _key(node: exp.Expression) -> str:
    """The node's SQL with column qualifiers dropped: the same before and after qualify."""
    bare = node.copy()
    for column in bare.find_all(exp.Column):
        column.set("table", None)
    return bare.sql("postgres")


def _nan_free(value: exp.Expression) -> exp.Expression:
    isnan = exp.Anonymous(this="ISNAN", expressions=[value.copy()])
    return exp.case().when(isnan, exp.null()).else_(value.copy())


def _any_nan(value: exp.Expression) -> exp.Expression:
    isnan = exp.Anonymous(this="ISNAN", expressions=[value.copy()])
    return exp.Anonymous(this="BOOL_OR", expressions=[isnan])


_NAN = exp.cast(exp.Literal.string("NaN"), exp.DataType.build("DOUBLE"))


def _float_max(node: exp.Max) -> exp.Expression:
    """NaN when any value is NaN, else the greatest number."""
    largest = exp.Max(this=_nan_free(node.this))
    return exp.case().when(_any_nan(node.this), _NAN.copy()).else_(largest)


def _float_min(node: exp.Min) -> exp.Expression:
    """The least number; NaN only when every value is NaN."""
    least = exp.Min(this=_nan_free(node.this))
    return exp.Coalesce(this=least, expressions=[exp.case().when(_any_nan(node.this), _NAN.copy())])


def _call(name: str, *operands: exp.Expression) -> exp.Expression:
    casts = [exp.Cast(this=o.copy(), to=_ARGUMENT.copy()) for o in operands]
    kinds = [exp.Anonymous(this="ARROW_TYPEOF", expressions=[o.copy()]) for o in operands]
    return exp.Anonymous(this=name, expressions=[*casts, *kinds])


def _sensitive_type(sql_type: str) -> bool:
    return sql_type.upper().startswith(("DECIMAL", "NUMERIC", "DOUBLE"))


def _decimal_cast(cast: exp.Cast) -> bool:
    return cast.to.this == _DECIMAL


def _is_decimal(node: exp.Expression) -> bool:
    """Decimal-typed, or a literal such as ``7.0`` (kyma's sessions parse those as decimals,
    as Postgres does; sqlglot types them DOUBLE)."""
    if isinstance(node, exp.Literal) and node.is_number:
        return "." in node.name and "e" not in node.name.lower()
    return node.type is not None and node.type.this == _DECIMAL


def _divides_decimals(div: exp.Div) -> bool:
    """Postgres divides as numeric when one side is numeric and the other numeric or integer."""
    sides = (div.this, div.expression)
    if not any(_is_decimal(s) for s in sides):
        return False
    return all(
        _is_decimal(s) or (s.type is not None and s.type.this in exp.DataType.INTEGER_TYPES)
        for s in sides
    )


def _is_float(node: exp.Expression) -> bool:
    return node.type is not None and node.type.this in _FLOATS


_REWRITES: dict[type[exp.Expression], tuple[Callable[..., bool], Callable[..., exp.Expression]]] = {
    exp.Avg: (
        lambda node: _is_decimal(node.this),
        lambda node: _call("KYMA_NUMERIC_AVG", node.this),
    ),
    exp.Div: (
        _divides_decimals,
        lambda node: _call("KYMA_NUMERIC_DIV", node.this, node.expression),
    ),
    exp.Max: (lambda node: _is_float(node.this), _float_max),
    exp.Min: (lambda node: _is_float(node.this), _float_min),
}
