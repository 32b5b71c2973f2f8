"""Postgres' JSON operators on dynamic columns: ``attrs -> 'http' ->> 'method'``.

A chain of ``->`` / ``->>`` with string keys on a column becomes the bracket path
``attrs['http']['method']``, which ``dynamic_paths`` (the next rule) reads. Both operators
answer text, as the bracket does (Postgres' ``->`` would answer jsonb). Integer steps
(``-> 0``) are left alone.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT a -> 'x' ->> 'y.z' FROM t", read="postgres")).sql("postgres")
"SELECT a['x']['y.z'] FROM t"
"""

from __future__ import annotations

from sqlglot import exp

_OPERATORS = (exp.JSONExtract, exp.JSONExtractScalar)


def _keys(path: exp.Expression) -> list[str] | None:
    if not isinstance(path, exp.JSONPath):
        return None
    keys: list[str] = []
    for step in path.expressions:
        if isinstance(step, exp.JSONPathRoot):
            continue
        if not isinstance(step, exp.JSONPathKey) or not isinstance(step.this, str):
            return None
        keys.append(step.this)
    return keys


def _bracket(node: exp.Expression) -> exp.Expression | None:
    """The bracket path of an operator chain over a column, or None."""
    keys: list[str] = []
    current = node
    while isinstance(current, _OPERATORS):
        step = _keys(current.expression)
        if step is None:
            return None
        keys = step + keys
        current = current.this
    if not isinstance(current, exp.Column) or not keys:
        return None
    result: exp.Expression = current.copy()
    for key in keys:
        result = exp.Bracket(this=result, expressions=[exp.Literal.string(key)])
    return result


def rule(expression: exp.Expression) -> exp.Expression:
    def transform(node: exp.Expression) -> exp.Expression:
        if isinstance(node, _OPERATORS):
            return _bracket(node) or node
        return node

    return expression.transform(transform, copy=False)
