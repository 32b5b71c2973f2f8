"""``has_table_privilege``, ``has_schema_privilege``, ``has_database_privilege`` and
``has_any_column_privilege`` (Metabase's table privileges, psql's ``\\l+``) as TRUE for the
privileges of reading (SELECT, USAGE, CONNECT) and FALSE for any other: the catalog lists only
what the caller's token may read, and a write is checked against the token when it runs.
A privilege list (``'SELECT, INSERT'``) holds when one of its privileges does, as in
Postgres. The privilege must be a literal; the role and object arguments are not read.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT has_table_privilege(current_user, t, 'select'), has_schema_privilege(s, 'CREATE')"
... )
>>> rule(stmt).sql("postgres")
'SELECT TRUE, FALSE'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_FUNCTIONS = {
    "has_table_privilege",
    "has_schema_privilege",
    "has_database_privilege",
    "has_any_column_privilege",
}
_READ = {"select", "usage", "connect"}


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for call in stmt.find_all(exp.Anonymous):
        if call.name.lower() not in _FUNCTIONS or not call.expressions:
            continue
        wanted = call.expressions[-1]
        if isinstance(wanted, exp.Literal) and wanted.is_string:
            asked = {p.strip().lower() for p in wanted.name.split(",")}
            pairs.append((call, exp.Boolean(this=bool(asked & _READ))))
    replace_all(pairs)
    return stmt
