"""Postgres' jsonb operators on dynamic values: ``->``, ``->>``, ``#>``, ``#>>``, ``@>``,
``<@``, ``?``, ``?|`` and ``?&``.

A chain of path operators becomes one call with the whole path (``jsonb.py`` spells paths):
``->`` and ``#>`` answer jsonb (``kyma_jsonb_get``), ``->>`` and ``#>>`` text
(``kyma_dyn_get``). A text chain of plain keys on a column becomes the bracket path
``attrs['http']['method']`` instead, which ``dynamic_paths`` reads (and the planner serves from
shredded sub-columns). ``@>`` and ``<@`` are jsonb containment when a side is JSON (a JSON
literal, a jsonb operator, a ``::jsonb``); otherwise array containment, left alone.

>>> import sqlglot
>>> sql = "SELECT a -> 'x' ->> 'y.z', a -> 'x' -> 0, a #>> '{x,1}', a ? 'k' FROM t"
>>> rule(sqlglot.parse_one(sql, read="postgres")).sql("postgres")
'SELECT a[\\'x\\'][\\'y.z\\'], KYMA_JSONB_GET(a, \\'["x", 0]\\'), \
KYMA_DYN_GET(a, \\'["x", ["1"]]\\'), KYMA_JSONB_EXISTS(a, \\'k\\') FROM t'
"""

from __future__ import annotations

import json

from sqlglot import exp

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query.rewrite import jsonb_functions

_JSONB = (exp.JSONExtract, exp.JSONBExtract)
_TEXT = (exp.JSONExtractScalar, exp.JSONBExtractScalar)
_KEYS = {
    exp.JSONBContainsTopKey: "kyma_jsonb_exists",
    exp.JSONBContainsAnyTopKeys: "kyma_jsonb_exists_any",
    exp.JSONBContainsAllTopKeys: "kyma_jsonb_exists_all",
}


def _steps(operand: exp.Expression, sign: str) -> list:
    """The path steps of one operator's right side."""
    if isinstance(operand, exp.JSONPath):
        steps: list = []
        for step in operand.expressions:
            key = isinstance(step, exp.JSONPathKey) and isinstance(step.this, str)
            if key or isinstance(step, exp.JSONPathSubscript) and isinstance(step.this, int):
                steps.append(step.this)
            elif not isinstance(step, exp.JSONPathRoot):
                break
        else:
            return steps
    if isinstance(operand, exp.Neg) and isinstance(operand.this, exp.Literal):
        return [-int(operand.this.name)]
    if isinstance(operand, exp.Literal) and operand.is_string and sign.startswith("#"):
        return [_flexible(s) for s in text_array(operand.this)]
    if isinstance(operand, exp.Literal) and operand.is_int:
        return [int(operand.this)]
    raise UnsupportedStatementError(
        f"the right side of {sign} must be a constant key or path, got {operand.sql('postgres')!r}"
    )


def _flexible(step: str) -> str | list[str]:
    """A ``#>`` step: a key, or (when it spells an integer) a key or an array index."""
    try:
        int(step.strip())
    except ValueError:
        return step
    return [step]


def text_array(text: str) -> list[str]:
    """The elements of a Postgres text array literal such as ``{a,"b,c",0}``."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise SqlError(f"malformed array literal: {text!r}")
    items: list[str] = []
    current: list[str] = []
    quoted = escaped = was_quoted = False
    for char in body[1:-1]:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted, was_quoted = not quoted, True
        elif char == "," and not quoted:
            items.append(_item(current, was_quoted))
            current, was_quoted = [], False
        else:
            current.append(char)
    if quoted or escaped:
        raise SqlError(f"malformed array literal: {text!r}")
    if current or was_quoted or items:
        items.append(_item(current, was_quoted))
    return items


def _item(chars: list[str], was_quoted: bool) -> str:
    text = "".join(chars)
    if not was_quoted and text.strip().upper() == "NULL":
        raise SqlError("a jsonb path has no NULL steps")
    return text if was_quoted else text.strip()


def _path(node: exp.Expression) -> exp.Expression:
    """One call (or bracket path) for the operator chain that ends at ``node``."""
    steps = _steps(node.expression, _sign(node))
    current = node.this
    while isinstance(current, _JSONB):
        steps = _steps(current.expression, _sign(current)) + steps
        current = current.this
    base = current
    text = isinstance(node, _TEXT)
    if text and isinstance(base, exp.Column) and steps and all(isinstance(s, str) for s in steps):
        result: exp.Expression = base
        for key in steps:
            result = exp.Bracket(this=result, expressions=[exp.Literal.string(key)])
        return result
    function = "kyma_dyn_get" if text else "kyma_jsonb_get"
    path = exp.Literal.string(json.dumps(steps))
    return exp.Anonymous(this=function, expressions=[jsonb_functions.jsonb(rule(base)), path])


def _sign(node: exp.Expression) -> str:
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)):
        return "#>>" if isinstance(node, exp.JSONBExtractScalar) else "#>"
    return "->>" if isinstance(node, exp.JSONExtractScalar) else "->"


def _containment(node: exp.Expression) -> exp.Expression:
    """``a @> b`` / ``a <@ b`` on jsonb, or ``node`` (arrays) when neither side is JSON."""
    left, right = node.this, node.expression
    if not (jsonb_functions.is_jsonb(left) or jsonb_functions.is_jsonb(right)):
        return node
    if isinstance(node, exp.ArrayContainedBy):
        left, right = right, left
    return exp.Anonymous(
        this="kyma_jsonb_contains",
        expressions=[jsonb_functions.jsonb(rule(left)), jsonb_functions.jsonb(rule(right))],
    )


def _comparison(node: exp.Binary) -> exp.Expression:
    """``=`` and ``<>`` of jsonb values compare as jsonb (key order and number spelling
    aside); ordering comparisons of jsonb are refused."""
    left, right = node.this, node.expression
    if not (_shaped(left) or _shaped(right)):
        return node
    if not isinstance(node, (exp.EQ, exp.NEQ)):
        raise UnsupportedStatementError(f"{node.key.upper()} of jsonb values is not supported")
    operands = [jsonb_functions.jsonb(rule(side)) for side in (left, right)]
    equals = exp.Anonymous(this="kyma_jsonb_equals", expressions=operands)
    return equals if isinstance(node, exp.EQ) else exp.Not(this=equals)


def _shaped(node: exp.Expression) -> bool:
    """A jsonb value by its shape, not a mere JSON-looking literal."""
    return jsonb_functions.is_jsonb(node) and not isinstance(node.unnest(), exp.Literal)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def rule(expression: exp.Expression) -> exp.Expression:
    def transform(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (*_JSONB, *_TEXT)):
            return _path(node)
        if isinstance(node, _COMPARISONS):
            return _comparison(node)
        if isinstance(node, (exp.ArrayContainsAll, exp.ArrayContainedBy)):
            return _containment(node)
        if type(node) in _KEYS:
            return exp.Anonymous(
                this=_KEYS[type(node)],
                expressions=[jsonb_functions.jsonb(rule(node.this)), rule(node.expression)],
            )
        return node

    return expression.transform(transform, copy=False)
