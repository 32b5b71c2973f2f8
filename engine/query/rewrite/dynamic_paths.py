"""Dynamic paths: ``attributes['http.method']`` and ``attributes['a']['b']``.

A bracket with string keys on a column becomes ``kyma_dyn_get(column, '<keys as JSON>')``,
which answers the value as text (cast it: ``attributes['status']::long``). Brackets with
integer indexes (vectors, arrays) are left alone.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT a['x']['y'] FROM t", read="postgres")).sql("postgres")
'SELECT KYMA_DYN_GET(a, \\'["x", "y"]\\') FROM t'
"""

from __future__ import annotations

import json

from sqlglot import exp

FUNCTION = "kyma_dyn_get"


def _keys(node: exp.Bracket) -> tuple[exp.Expression, list[str]] | None:
    """The column under a chain of string-keyed brackets, and the keys, outermost last."""
    keys: list[str] = []
    current: exp.Expression = node
    while isinstance(current, exp.Bracket):
        if len(current.expressions) != 1:
            return None
        key = current.expressions[0]
        if not (isinstance(key, exp.Literal) and key.is_string):
            return None
        keys.insert(0, key.this)
        current = current.this
    return (current, keys) if isinstance(current, exp.Column) else None


def rule(expression: exp.Expression) -> exp.Expression:
    def transform(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Bracket):
            found = _keys(node)
            if found is not None:
                column, keys = found
                return exp.Anonymous(
                    this=FUNCTION, expressions=[column.copy(), exp.Literal.string(json.dumps(keys))]
                )
        return node

    return expression.transform(transform, copy=False)
