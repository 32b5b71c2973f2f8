"""The definitions of objects kyma has none of, as NULL whatever the arguments: constraints,
indexes, triggers, rules, serial sequences, partition keys and extended statistics
(``pg_get_constraintdef`` and the like, which SQLAlchemy's inspector and psql's ``\\d``
call over relations that are empty in kyma: their NULL is never read).

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT pg_get_constraintdef(c.oid, true), pg_get_indexdef(i) FROM c")
>>> rule(stmt).sql("postgres")
'SELECT NULL, NULL FROM c'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_FUNCTIONS = {
    "pg_get_constraintdef",
    "pg_get_indexdef",
    "pg_get_triggerdef",
    "pg_get_ruledef",
    "pg_get_serial_sequence",
    "pg_get_partkeydef",
    "pg_get_statisticsobjdef_columns",
}


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = [c for c in stmt.find_all(exp.Anonymous) if c.name.lower() in _FUNCTIONS]
    replace_all((call, exp.null()) for call in calls)
    return stmt
