"""pgcli asks whether a column's type is a composite type with a scalar subquery
``(SELECT c.relkind = 'c' FROM pg_class c WHERE c.oid = t.typrelid)``: kyma has none, so the
answer is FALSE.

>>> import sqlglot
>>> stmt = sqlglot.parse_one(
...     "SELECT (SELECT c.relkind = 'c' FROM pg_class c WHERE c.oid = t.typrelid) FROM pg_type t"
... )
>>> rule(stmt).sql("postgres")
'SELECT FALSE FROM pg_type AS t'
"""

from __future__ import annotations

from sqlglot import exp

from kyma.pgcatalog.rules._tables import catalog_name, from_tables
from kyma.pgcatalog.rules._tree import replace_all


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for subquery in list(stmt.find_all(exp.Subquery)):
        select = subquery.this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            continue
        test = select.expressions[0]
        kind = isinstance(test, exp.EQ) and test.this.name.lower() == "relkind"
        over = [catalog_name(t) for t in from_tables(select)]
        if kind and test.expression.name == "c" and over == ["pg_class"]:
            pairs.append((subquery, exp.false()))
    replace_all(pairs)
    return stmt
