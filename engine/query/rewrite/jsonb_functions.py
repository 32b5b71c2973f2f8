"""Postgres' jsonb functions and casts on dynamic values.

- ``jsonb_typeof``, ``jsonb_array_length`` call kyma's UDFs (``jsonb.py``);
- the set-returning ``jsonb_array_elements``, ``jsonb_array_elements_text`` and
  ``jsonb_object_keys`` in a select list unnest the UDF's list (one row per element, as
  Postgres; ``kyma_jsonb_of`` marks unnested jsonb elements as dynamic again);
  ``jsonb_each`` / ``jsonb_each_text`` there, and these functions in FROM, are refused
  (0A000);
- ``'…'::jsonb`` parses the text (``kyma_jsonb``), a jsonb value ``::text`` renders it as
  Postgres does (``kyma_jsonb_text``). A plain column's casts wait for the planner, which
  knows whether it is dynamic (``_jsonb_columns``). ``json`` (text kept as written) is refused.

String literals where jsonb is expected are jsonb, as Postgres reads an untyped literal.

>>> import sqlglot
>>> sql = "SELECT jsonb_array_elements(a), jsonb_typeof('[1]'), ('{}'::jsonb)::text FROM t"
>>> rule(sqlglot.parse_one(sql, read="postgres")).sql("postgres")
"SELECT KYMA_JSONB_OF(UNNEST(KYMA_JSONB_ARRAY_ELEMENTS(a))), KYMA_JSONB_TYPEOF(KYMA_JSONB('[1]')), \
KYMA_JSONB_TEXT(KYMA_JSONB('{}')) FROM t"
"""

from __future__ import annotations

import json

from sqlglot import exp

from kyma.engine.errors import UnsupportedStatementError

_SCALAR = {"jsonb_typeof": "kyma_jsonb_typeof", "jsonb_array_length": "kyma_jsonb_array_length"}
_SETS = {
    name: f"kyma_{name}"
    for name in (
        "jsonb_array_elements",
        "jsonb_array_elements_text",
        "jsonb_object_keys",
        "jsonb_each",
        "jsonb_each_text",
    )
}
_UNNESTED = {"jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys"}
JSONB_RESULTS = frozenset({"kyma_jsonb_get", "kyma_jsonb"})
"""The UDFs whose answer is jsonb (CBOR)."""
_T = exp.DataType.Type
_TEXTS = {_T.TEXT, _T.VARCHAR, _T.CHAR, _T.NCHAR, _T.NVARCHAR}


def is_jsonb(node: exp.Expression) -> bool:
    """Whether ``node`` is a jsonb value by its shape (a column is not known here)."""
    node = node.unnest()
    if isinstance(node, exp.Cast):
        return node.to.this == _T.JSONB
    if isinstance(node, (exp.JSONExtract, exp.JSONBExtract)):
        return True
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in JSONB_RESULTS
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this.lstrip()[:1] in ("{", "[") and _parses(node.this)
    return False


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def jsonb(node: exp.Expression) -> exp.Expression:
    """``node`` where jsonb is expected: a string literal becomes ``kyma_jsonb(literal)``."""
    if isinstance(node, exp.Literal) and node.is_string:
        return exp.Anonymous(this="kyma_jsonb", expressions=[node])
    return node


def _cast(node: exp.Cast) -> exp.Expression:
    operand, to = node.this.unnest(), node.to.this
    if to == _T.JSON:
        raise UnsupportedStatementError("type json is not supported: use jsonb")
    if to == _T.JSONB:
        if isinstance(operand, exp.Column):
            return node  # the planner knows whether it is already dynamic
        if is_jsonb(operand) and not isinstance(operand, exp.Literal):
            return rule(operand)
        return exp.Anonymous(this="kyma_jsonb", expressions=[rule(operand)])
    if to in _TEXTS and is_jsonb(operand) and not isinstance(operand, exp.Literal):
        return exp.Anonymous(this="kyma_jsonb_text", expressions=[rule(operand)])
    return node


def _in_select_list(node: exp.Expression) -> bool:
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, exp.Query):
        child, parent = parent, parent.parent
    return isinstance(parent, exp.Select) and child in parent.expressions


def _function(node: exp.Anonymous) -> exp.Expression:
    name = node.name.lower()
    if name in _SCALAR:
        arguments = [rule(jsonb(a)) for a in node.expressions]
        return exp.Anonymous(this=_SCALAR[name], expressions=arguments)
    if name not in _SETS:
        return node
    call = exp.Anonymous(this=_SETS[name], expressions=[rule(jsonb(a)) for a in node.expressions])
    if isinstance(node.parent, exp.Table):
        raise UnsupportedStatementError(
            f"{name}(...) in FROM is not supported: call it in the select list"
            if name in _UNNESTED
            else f"{name}(...) is not supported: use jsonb_object_keys and ->"
        )
    if name in _UNNESTED and _in_select_list(node):
        unnested = exp.Unnest(expressions=[call])
        if name != "jsonb_array_elements":
            return unnested
        return exp.Anonymous(this="kyma_jsonb_of", expressions=[unnested])  # its elements are jsonb
    raise UnsupportedStatementError(f"{name}(...) is supported in a select list only")


def rule(expression: exp.Expression) -> exp.Expression:
    def transform(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Cast) and node.to.this in (_T.JSON, _T.JSONB, *_TEXTS):
            return _cast(node)
        if isinstance(node, exp.Anonymous):
            return _function(node)
        return node

    return expression.transform(transform, copy=False)
