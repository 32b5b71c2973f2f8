"""``col_description(...)``, ``obj_description(...)`` and ``shobj_description(...)`` (the
comments Metabase and psql read) as NULL: kyma keeps no comments, whatever the arguments
(Metabase's cast a table's name to
``regclass``).

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT col_description(CAST(f(x) AS oid), 1) AS c")
>>> rule(stmt).sql("postgres")
'SELECT NULL AS c'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_FUNCTIONS = {"col_description", "obj_description", "shobj_description"}


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = [c for c in stmt.find_all(exp.Anonymous) if c.name.lower() in _FUNCTIONS]
    replace_all((call, exp.null()) for call in calls)
    return stmt
