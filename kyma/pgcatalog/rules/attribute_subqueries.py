"""psql's ``\\d`` reads a column's default and collation in correlated scalar subqueries over
``pg_attrdef`` and ``pg_collation``, SQLAlchemy a column's identity over ``pg_sequence``;
kyma columns have none, so each such subquery is NULL (as Postgres answers for a column
without them), as is any scalar subquery that reads an empty relation and answers no rows.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT a.attname, (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d"
...     " WHERE d.adrelid = a.attrelid) AS def FROM pg_attribute a"
... )
>>> rule(stmt).sql("postgres")
'SELECT a.attname, NULL AS def FROM pg_attribute AS a'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tables import catalog_name, from_tables
from kyma.pgcatalog.rules._tree import replace_all
from kyma.pgcatalog.rules.empty_relations import no_rows

_NONE_IN_KYMA = {"pg_attrdef", "pg_collation"}


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for subquery in list(stmt.find_all(exp.Subquery)):
        if isinstance(subquery.parent, exp.From | exp.Join | exp.In | exp.Exists):
            continue  # a derived table or a set, not a value
        names = {catalog_name(t) for t in from_tables(subquery.this)}
        empty = isinstance(subquery.this, exp.Select) and no_rows(subquery.this)
        if names & _NONE_IN_KYMA or (empty and not isinstance(subquery.parent, exp.Array)):
            pairs.append((subquery, exp.null()))
    replace_all(pairs)
    return stmt
