"""Postgres' catalog over kyma's tables: ``information_schema`` (tables, columns, schemata),
a small ``pg_catalog`` (see ``_relations`` and ``_empty``) and the server functions clients
call (``version()``, ``current_schema()``, ``format_type``, ``pg_get_…``), for psql's ``\\d``,
pgcli's completion and the schema browsers of BI tools.

``CatalogRelations`` is what the query engine resolves them through (``engine.query.
relations``): a statement that names them is a query like any other — parsed once, within
the engine's guards, limits, timeout, concurrency gate and cancellation — whose catalog
relations are built for the caller (a table-limited token sees only its tables). Clients'
spellings of Postgres constructs kyma plans differently are sqlglot rules (``rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
from datafusion import ScalarUDF
from sqlglot import exp

from kyma.engine.catalog import TableInfo, ViewInfo
from kyma.engine.errors import NotFoundError, SqlError
from kyma.engine.query import QueryResult
from kyma.engine.query._running import RunningStatements, current_caller
from kyma.engine.query.relations import Relations
from kyma.pgcatalog import _activity, _functions, _relations, _signal, rules
from kyma.pgcatalog._empty import EMPTY, empty_relation
from kyma.pgcatalog._information_schema import VIEWS
from kyma.pgwire._backends import Backends

CATALOG, INFORMATION_SCHEMA = "pg_catalog", "information_schema"
# the relations built from the caller's tables; the others are the same for everyone
_OF_TABLES = {
    "pg_class",
    "pg_attribute",
    "pg_views",
    "pg_matviews",
    "pg_tables",
    "tables",
    "views",
    "columns",
}
_ACTIVITY = "pg_stat_activity"  # of the sessions and running statements, for this caller


class CatalogRelations(Relations):
    """``backends``: the server's Postgres protocol sessions and running statements, which
    ``pg_stat_activity`` lists and ``pg_cancel_backend`` stops (None: none)."""

    schemas = frozenset({CATALOG, INFORMATION_SCHEMA})

    def __init__(self, backends: Backends | None = None) -> None:
        self._functions = _functions.udfs()
        self.backends = backends if backends is not None else Backends(RunningStatements())

    def relation(self, schema: str | None, name: str) -> str | None:
        if schema is not None:  # whether it exists is told when it is built
            return schema
        known = name in _relations.RELATIONS or name in EMPTY or name == _ACTIVITY
        return CATALOG if known else None

    def build(
        self, schema: str, name: str, tables: Callable[[], list[TableInfo | ViewInfo]]
    ) -> pa.Table:
        infos = tables() if name in _OF_TABLES else []
        if schema == INFORMATION_SCHEMA:
            view = VIEWS.get(name)
            if view is None:
                raise SqlError(
                    f"information_schema.{name} is not available: kyma has "
                    + ", ".join(f"information_schema.{v}" for v in VIEWS)
                )
            return view(infos)
        if name in EMPTY:
            return empty_relation(name)
        if name == _ACTIVITY:
            return _activity.pg_stat_activity(self.backends, current_caller())
        relation = _relations.RELATIONS.get(name)
        if relation is None:
            raise NotFoundError(f'relation "{schema}.{name}" does not exist')
        return relation(infos)

    def functions(self) -> Sequence[ScalarUDF]:
        return self._functions

    def rewrite(self, stmt: exp.Expression) -> exp.Expression:
        return rules.rewrite(stmt)

    def statement(self, stmt: exp.Expression) -> Callable[[], QueryResult] | None:
        return _signal.statement(stmt, self.backends)
