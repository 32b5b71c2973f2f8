"""Path columns: ``kyma_dyn_get(t.attributes, '["a"]')`` served by the scan, not the UDF.

Each call with a constant path over a kyma table's dynamic column becomes a reference to a
virtual text column of that table (``"__kyma/attributes/a"``). The scan fills it per extent
(``_path_scan.py``) from the extent's shredded sub-columns when it has them, else with the
UDF's own lookup on the CBOR column; the CBOR column is read only if something else needs it.
A statement with ``*`` in a select list is left alone (the star would list the virtual columns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from kyma.engine.format._shred import HIDDEN_PREFIX
from kyma.engine.format.predicate import dynamic_path
from kyma.engine.query.rewrite.dynamic_paths import FUNCTION

_TAG = "kyma_path"


@dataclass(frozen=True)
class PathColumn:
    """A virtual text column: the answer of ``kyma_dyn_get(column, path)``."""

    column: str
    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return HIDDEN_PREFIX + dynamic_path(self.column, self.path)


def path_call(node: exp.Expression) -> tuple[exp.Column, tuple[str, ...]] | None:
    """The column and keys of ``kyma_dyn_get(column, '<keys as JSON>')``, else None."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == FUNCTION):
        return None
    if len(node.expressions) != 2:
        return None
    column, path = node.expressions
    if not isinstance(column, exp.Column) or not (isinstance(path, exp.Literal) and path.is_string):
        return None
    try:
        keys = json.loads(path.this)
    except ValueError:
        return None
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        return None
    return column, tuple(keys)


def _has_star(stmt: exp.Expression) -> bool:
    for select in stmt.find_all(exp.Select):
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
            ):
                return True
    return False


def tag(stmt: exp.Expression) -> list[exp.Anonymous]:
    """Mark each path call of ``stmt`` before it is qualified (copies keep the mark)."""
    if _has_star(stmt):
        return []
    calls = [node for node in stmt.find_all(exp.Anonymous) if path_call(node) is not None]
    for i, node in enumerate(calls):
        node.meta[_TAG] = i
    return calls


def rewrite(
    calls: list[exp.Anonymous], qualified: exp.Expression, dynamic: dict[str, set[str]]
) -> dict[str, list[PathColumn]]:
    """Replace the tagged calls whose column belongs to a kyma table (``dynamic``: session
    name -> its dynamic columns) by path columns; the path columns of each table."""
    if not calls:
        return {}
    owners: dict[int, tuple[str, PathColumn]] = {}
    for scope in traverse_scope(qualified):
        for column in scope.columns:
            call = column.parent
            if not isinstance(call, exp.Anonymous) or _TAG not in call.meta:
                continue
            found = path_call(call)
            source = scope.selected_sources.get(column.table)
            table = source[0] if isinstance(source, tuple) else source
            if found is None or not isinstance(table, exp.Table) or found[0] is not column:
                continue
            if column.name in dynamic.get(table.name, ()):
                owners[call.meta[_TAG]] = (table.name, PathColumn(column.name, found[1]))
    out: dict[str, list[PathColumn]] = {}
    for i, call in enumerate(calls):
        if i not in owners:
            continue
        table, path = owners[i]
        column = call.expressions[0]
        ref = exp.column(exp.to_identifier(path.name, quoted=True), table=column.args.get("table"))
        call.replace(ref)
        if path not in out.setdefault(table, []):
            out[table].append(path)
    for call in calls:
        call.meta.pop(_TAG, None)
    return out


def still_read(stmt: exp.Expression, columns: set[str], paths: list[PathColumn]) -> set[str]:
    """``columns`` without the dynamic columns that only path columns used."""
    named = {c.name for c in stmt.find_all(exp.Column)}
    return {c for c in columns if c in named or all(p.column != c for p in paths)}
