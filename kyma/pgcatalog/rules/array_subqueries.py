"""``ARRAY(SELECT …)`` that answers no rows in kyma is the empty array: over an empty
relation (psql's ``\\du`` over ``pg_auth_members``) or over the ``unnest`` of storage options
kyma keeps NULL (psql's ``\\d+`` over a TOAST table's ``reloptions``).

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT array(SELECT 'toast.' || x FROM pg_catalog.unnest(tc.reloptions) x) FROM t")
>>> rule(stmt).sql("postgres")
'SELECT CAST(ARRAY[] AS TEXT[]) FROM t'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all
from kyma.pgcatalog.rules.empty_relations import no_rows

_NULL_OPTIONS = {"reloptions", "spcoptions", "attoptions"}


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for array in stmt.find_all(exp.Array):
        (query,) = array.expressions if len(array.expressions) == 1 else (None,)
        if isinstance(query, exp.Subquery):
            query = query.this
        if isinstance(query, exp.Select) and (no_rows(query) or _of_null_options(query)):
            empty = exp.cast(exp.Array(expressions=[]), "text[]", dialect="postgres")
            pairs.append((array, empty))
    replace_all(pairs)
    return stmt


def _of_null_options(select: exp.Select) -> bool:
    source = select.args.get("from_")
    unnest = source.this if source is not None else None
    if isinstance(unnest, exp.Table):
        unnest = unnest.this
    if isinstance(unnest, exp.Explode):  # kyma's dialect reads unnest so
        column = unnest.this
    elif isinstance(unnest, exp.Unnest) and len(unnest.expressions) == 1:
        column = unnest.expressions[0]
    else:
        return False
    return isinstance(column, exp.Column) and column.name in _NULL_OPTIONS
