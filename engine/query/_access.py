"""What running a statement needs: the ``read`` or ``admin`` scope, and the tables it reads.

The engine knows nothing of tokens; a caller (the HTTP API, Flight SQL) passes a check that
decides from an ``Access``. Only statements positively known to read are ``read``, INSERT
is an ``ingest`` of its table (and a read of what its SELECT reads); every other kind (DDL,
connector and source statements, anything unknown) needs ``admin``.
Metadata follows the same check: SHOW TABLES lists the tables the check lets through, and
SHOW CONNECTORS and SHOW SOURCES tell about every table (``every_table``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from kyma.engine.errors import PermissionDeniedError
from kyma.engine.query.federation import is_live

READ = "read"
WRITE = "ingest"  # the scope of REST ingest: an INSERT writes through the same path
ADMIN = "admin"

# First words of statements that only read. SHOW covers SHOW TABLES, CONNECTORS, SOURCES.
QUERY_WORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "(", "DESCRIBE", "DESC"})


@dataclass(frozen=True)
class Access:
    """``scope`` is READ or ADMIN; ``tables`` every table a read touches: kyma tables by
    name, connector tables as ``<connector>.<schema>.<table>``; None (``every_table``) when
    the statement tells about all of them (a token limited to some tables may not run it)."""

    scope: str
    tables: frozenset[str] | None = field(default_factory=frozenset)


def every_table(scope: str = READ) -> Access:
    """What a statement about every table (SHOW CONNECTORS, SHOW SOURCES) needs."""
    return Access(scope, None)


def readable(authorize: Callable[[Access], None]) -> Callable[[str], bool]:
    """Whether the check ``authorize`` lets a caller read one table: what listings show."""

    def check(table: str) -> bool:
        try:
            authorize(Access(READ, frozenset({table})))
        except PermissionDeniedError:
            return False
        return True

    return check


def federated_tables(stmt: exp.Expression) -> set[str]:
    """``pg_prod.public.users`` for each connector table a query names, with live() or not."""
    found = set()
    for table in stmt.find_all(exp.Table):
        if is_live(table) and table.this.expressions:
            found.add(table.this.expressions[0].sql("postgres").replace('"', ""))
        elif table.args.get("catalog"):
            found.add(".".join(p.name for p in table.parts))
    return found
