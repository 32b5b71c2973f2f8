"""The sizes of relations and databases (``pg_table_size``, ``pg_total_relation_size``,
``pg_database_size`` …, psql's ``\\dt+`` and ``\\l+``) as NULL, and ``pg_size_pretty`` of
such a NULL as NULL: kyma's tables live as extents in an object store, not as Postgres
relation files, so it has no size in Postgres' sense to tell.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT pg_size_pretty(pg_table_size(c.oid)) FROM c")).sql()
'SELECT NULL FROM c'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_SIZES = {
    "pg_table_size",
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_indexes_size",
    "pg_database_size",
}


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = [c for c in stmt.find_all(exp.Anonymous) if c.name.lower() in _SIZES]
    replace_all((call, exp.null()) for call in calls)
    pretty = [
        c
        for c in stmt.find_all(exp.Anonymous)
        if c.name.lower() == "pg_size_pretty"
        and len(c.expressions) == 1
        and isinstance(c.expressions[0], exp.Null)
    ]
    replace_all((call, exp.null()) for call in pretty)
    return stmt
