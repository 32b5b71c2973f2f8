"""A kyma table's dynamic column where only its type tells what Postgres means:
``attributes::text`` (jsonb rendered as Postgres does), ``attributes::jsonb`` (itself; a text
column's value parsed) and ``events[1]`` (jsonb subscripts count from 0: the second element).

The rewrite rules cannot tell a dynamic column from a text or array one; the planner can. Each
candidate node is marked before the statement is qualified (copies keep the mark), its column
resolved to a table in the qualified copy, and the marked node replaced in the statement.
"""

from __future__ import annotations

import json

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

_TAG = "kyma_jsonb_column"
_T = exp.DataType.Type
_TEXTS = {_T.TEXT, _T.VARCHAR, _T.CHAR, _T.NCHAR, _T.NVARCHAR}


def _candidate(node: exp.Expression) -> bool:
    if isinstance(node, exp.Cast):
        return isinstance(node.this, exp.Column) and node.to.this in (_T.JSONB, *_TEXTS)
    if isinstance(node, exp.Bracket) and isinstance(node.this, exp.Column):
        return len(node.expressions) == 1 and _index(node) is not None
    return False


def _index(node: exp.Bracket) -> int | None:
    """A subscript's number as written (sqlglot's parse took Postgres' 1-based offset off)."""
    key = node.expressions[0]
    negative = isinstance(key, exp.Neg)
    key = key.this if negative else key
    if not (isinstance(key, exp.Literal) and key.is_int):
        return None
    return (-int(key.this) if negative else int(key.this)) + 1


def tag(stmt: exp.Expression) -> list[exp.Expression]:
    """Mark the candidates of ``stmt`` before it is qualified."""
    found = [node for node in stmt.find_all(exp.Cast, exp.Bracket) if _candidate(node)]
    for i, node in enumerate(found):
        node.meta[_TAG] = i
    return found


def rewrite(
    found: list[exp.Expression], qualified: exp.Expression, dynamic: dict[str, set[str]]
) -> None:
    """Replace the marked nodes by what they mean for their column's type (``dynamic``:
    session name -> its dynamic columns); a column not of a kyma table is left alone."""
    kinds: dict[int, bool] = {}
    for scope in traverse_scope(qualified):
        for column in scope.columns:
            node = column.parent
            if node is None or _TAG not in node.meta or node.this is not column:
                continue
            source = scope.selected_sources.get(column.table)
            table = source[0] if isinstance(source, tuple) else source
            if isinstance(table, exp.Table) and table.name in dynamic:
                kinds[node.meta[_TAG]] = column.name in dynamic[table.name]
    for i, node in enumerate(found):
        node.meta.pop(_TAG, None)
        if i in kinds:
            replacement = _meaning(node, kinds[i])
            if replacement is not node:
                node.replace(replacement)


def _subscripts(node: exp.Bracket) -> exp.Expression:
    """``events[1][0]``: one path over the dynamic column for the chain of subscripts."""
    steps = [_index(node)]
    top: exp.Expression = node
    while isinstance(top.parent, exp.Bracket) and top.arg_key == "this":
        parent = top.parent
        if len(parent.expressions) != 1 or _index(parent) is None:
            break
        steps.append(_index(parent))
        top = parent
    call = exp.Anonymous(
        this="kyma_jsonb_get",
        expressions=[node.this.copy(), exp.Literal.string(json.dumps(steps))],
    )
    top.replace(call)
    return call


def _meaning(node: exp.Expression, is_dynamic: bool) -> exp.Expression:
    column = node.this
    if isinstance(node, exp.Bracket):
        return _subscripts(node) if is_dynamic else node
    assert isinstance(node, exp.Cast)
    if node.to.this == _T.JSONB:
        return column if is_dynamic else exp.Anonymous(this="kyma_jsonb", expressions=[column])
    return exp.Anonymous(this="kyma_jsonb_text", expressions=[column]) if is_dynamic else node
