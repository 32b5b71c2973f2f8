"""TRUNCATE [TABLE] t [, …]: one new snapshot of each table with none of its extents, all
committed in one catalog transaction (a reader sees every table truncated or none).

The extents stay in the store while older snapshots keep them (``AS OF SNAPSHOT`` before
the truncate still reads every row); retention and orphan GC remove them in time. A table
synced from a Postgres source by CDC is refused: its rows follow the source's, and the next
change events would rebuild a state that matches neither. Truncating needs the write scope
(``ingest``) of each table, as an INSERT into it does.
"""

from __future__ import annotations

from sqlglot import exp

from kyma.engine.catalog import Catalog
from kyma.engine.errors import (
    NotFoundError,
    UnsupportedStatementError,
    WrongObjectTypeError,
)
from kyma.engine.query._access import WRITE, Access
from kyma.engine.query._parse import table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._writable import refuse_storage
from kyma.engine.query.rewrite import current_state


def access(stmt: exp.TruncateTable) -> Access:
    return Access(WRITE, frozenset(_names(stmt)))


def run(stmt: exp.TruncateTable, catalog: Catalog) -> QueryResult:
    """Every table is checked before any is truncated; each gets its own snapshot."""
    names = _names(stmt)
    found = catalog.get_tables(names)
    for name in names:
        info = found.get(name)
        if info is None:
            if catalog.get_views([name]):
                raise WrongObjectTypeError(f'"{name}" is not a table')
            raise NotFoundError(f'relation "{name}" does not exist')
        refuse_storage(catalog, name)
        if current_state.is_cdc(info.options):
            raise UnsupportedStatementError(
                f"TRUNCATE {name}: the table is synced from a Postgres source by CDC, and its"
                " rows follow the source's; truncate the source table instead"
            )
    catalog.truncate(names, {"source": "sql", "operation": "truncate"})
    return QueryResult.status_only("TRUNCATE TABLE")


def _names(stmt: exp.TruncateTable) -> list[str]:
    if stmt.args.get("is_database"):
        raise UnsupportedStatementError("TRUNCATE DATABASE is not supported")
    return list(dict.fromkeys(table_name(t) for t in stmt.expressions))
