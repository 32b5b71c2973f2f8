"""``pg_get_viewdef(oid[, pretty])`` (psql's ``\\d+ view``, SQLAlchemy's
``get_view_definition``) as the view's query from ``pg_views``: kyma keeps a view's query as
it was written, where Postgres prints its own deparsed form.

>>> import sqlglot
>>> rule(sqlglot.parse_one("SELECT pg_get_viewdef(c.oid, true) FROM c")).sql("postgres")
'SELECT (SELECT MAX(kyma_v.definition) FROM "pg_catalog$pg_views" AS kyma_v JOIN \
"pg_catalog$pg_class" AS kyma_c ON kyma_c.relname = kyma_v.viewname WHERE kyma_c.oid = c.oid) \
FROM c'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.query.relations import session_name
from kyma.pgcatalog.rules._tree import replace_all


def _relation(name: str, alias: str) -> exp.Table:
    return exp.Table(
        this=exp.to_identifier(session_name("pg_catalog", name), quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(alias)),
    )


def rule(stmt: exp.Expression) -> exp.Expression:
    calls = [c for c in stmt.find_all(exp.Anonymous) if c.name.lower() == "pg_get_viewdef"]
    replace_all((call, _definition(call.expressions[0])) for call in calls if call.expressions)
    return stmt


def _definition(oid: exp.Expression) -> exp.Expression:
    query = (
        exp.select(exp.func("max", exp.column("definition", "kyma_v")))
        .from_(_relation("pg_views", "kyma_v"))
        .join(_relation("pg_class", "kyma_c"), on="kyma_c.relname = kyma_v.viewname")
        .where(exp.column("oid", "kyma_c").eq(oid.copy()))
    )
    return exp.Subquery(this=query)
