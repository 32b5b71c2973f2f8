"""``FROM logs AS OF SNAPSHOT 42``: the table read at snapshot 42.

The dialect parses the clause into the table's ``version``; this rule turns it into the quoted
table name ``"logs@42"`` (aliased back to ``logs`` unless the query gives its own alias),
which the planner resolves to table ``logs`` at snapshot 42.

>>> import sqlglot
>>> sql = "SELECT * FROM logs AS OF SNAPSHOT 42 JOIN b AS OF SNAPSHOT 7 AS x ON logs.a = x.a"
>>> rule(sqlglot.parse_one(sql, read="kyma")).sql("postgres")
'SELECT * FROM "logs@42" AS "logs" JOIN "b@7" AS x ON logs.a = x.a'
"""

from __future__ import annotations

import re

from sqlglot import exp

from kyma.engine.errors import SqlError
from kyma.engine.query.dialect.expressions import SNAPSHOT

_VERSIONED = re.compile(r"(?P<table>[A-Za-z_][A-Za-z0-9_]*)@(?P<snapshot>\d+)")


def split_versioned(name: str) -> tuple[str, int | None]:
    """``logs@42`` → ``("logs", 42)``; a plain name → ``(name, None)``."""
    match = _VERSIONED.fullmatch(name)
    return (match["table"], int(match["snapshot"])) if match else (name, None)


def rule(expression: exp.Expression) -> exp.Expression:
    for table in list(expression.find_all(exp.Table)):
        version = table.args.get("version")
        if not (isinstance(version, exp.Version) and version.name == SNAPSHOT):
            continue
        ident = table.this
        if not isinstance(ident, exp.Identifier):
            raise SqlError(f"AS OF SNAPSHOT applies to kyma tables, not {ident.sql('postgres')!r}")
        name = ident.name if ident.quoted else ident.name.lower()
        table.set("version", None)
        table.set("this", exp.to_identifier(f"{name}@{int(version.expression.name)}", quoted=True))
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name, quoted=True)))
    return expression
