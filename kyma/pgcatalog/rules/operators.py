"""``a OPERATOR(pg_catalog.~) b`` (psql's spelling of an operator, safe from a search path)
as ``a ~ b``.

>>> import sqlglot
>>> stmt = sqlglot.parse_one("SELECT c OPERATOR(pg_catalog.~) '^(t)$'", read="postgres")
>>> rule(stmt).sql("postgres")
"SELECT (c ~ '^(t)$')"
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from kyma.pgcatalog.rules._tree import replace_all

_PREFIX = "pg_catalog."


def rule(stmt: exp.Expression) -> exp.Expression:
    pairs = []
    for node in list(stmt.find_all(exp.Operator)):
        operator = str(node.args.get("operator") or "")
        if not operator.lower().startswith(_PREFIX):
            continue
        plain = sqlglot.parse_one(f"l {operator[len(_PREFIX) :]} r", read="postgres")
        if isinstance(plain, exp.Binary):
            plain.set("this", node.this)
            plain.set("expression", node.expression)
            pairs.append((node, exp.paren(plain, copy=False)))
    replace_all(pairs)
    return stmt
