"""What running a statement needs: the ``read`` or ``admin`` scope, and the tables it reads.

The engine knows nothing of tokens; a caller (the HTTP API, Flight SQL) passes a check that
decides from an ``Access``. Only statements positively known to read are ``read``: every
other kind (DDL, connector and source statements, anything unknown) needs ``admin``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from kyma.engine.query.federation import is_live

READ = "read"
ADMIN = "admin"

# First words of statements that only read. SHOW covers SHOW TABLES, CONNECTORS, SOURCES.
QUERY_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "(", "DESCRIBE", "DESC"})


@dataclass(frozen=True)
class Access:
    """``scope`` is READ or ADMIN; ``tables`` every table a read touches: kyma tables by
    name, connector tables as ``<connector>.<schema>.<table>``."""

    scope: str
    tables: frozenset[str] = field(default_factory=frozenset)


def federated_tables(stmt: exp.Expression) -> set[str]:
    """``pg_prod.public.users`` for each connector table a query names, with live() or not."""
    found = set()
    for table in stmt.find_all(exp.Table):
        if is_live(table) and table.this.expressions:
            found.add(table.this.expressions[0].sql("postgres").replace('"', ""))
        elif table.args.get("catalog"):
            found.add(".".join(p.name for p in table.parts))
    return found
