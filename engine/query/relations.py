"""The seam for relations the SELECT planner resolves besides kyma tables: Postgres'
``pg_catalog`` and ``information_schema``, which the composition layer provides
(``kyma.pgcatalog``). The engine knows only this shape.

A statement names a relation by a qualified name (``pg_catalog.pg_class``,
``information_schema.tables``: ``schemas``) or by its bare name when no kyma table has that
name (``pg_class``). The planner renames each reference to ``session_name`` and registers the
relation's rows, built for the tables the caller may read, in the statement's own DataFusion
session; the statement then plans, runs and is bounded like any other. ``functions`` are
registered in every session; ``rewrite`` runs on every query after the names are resolved;
``statement`` runs the few queries that act rather than read (``SELECT pg_cancel_backend(12)``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import pyarrow as pa
from datafusion import ScalarUDF
from sqlglot import exp

from kyma.engine.catalog import TableInfo, ViewInfo
from kyma.engine.query._result import QueryResult

SEPARATOR = "$"
"""Between a relation's schema and name in its session name (``pg_catalog$pg_class``): no
kyma table name holds it."""


def session_name(schema: str, name: str) -> str:
    """The name a relation is registered under in a DataFusion session.

    >>> session_name("information_schema", "tables")
    'information_schema$tables'
    """
    return f"{schema}{SEPARATOR}{name}"


def relation_of(table: exp.Table) -> tuple[str, str] | None:
    """(schema, name) of a resolved reference (named by ``session_name``), else None.

    >>> relation_of(exp.to_table('"pg_catalog$pg_class"')), relation_of(exp.to_table("t"))
    (('pg_catalog', 'pg_class'), None)
    """
    return None if table.args.get("db") else split(table.name)


def split(session: str) -> tuple[str, str] | None:
    """(schema, name) of a session name, else None.

    >>> split("pg_catalog$pg_class"), split("events")
    (('pg_catalog', 'pg_class'), None)
    """
    schema, separator, name = session.partition(SEPARATOR)
    return (schema, name) if separator else None


class Relations(ABC):
    """Relations and functions a statement may use besides kyma tables."""

    schemas: frozenset[str]
    """The schemas whose names resolve here (``pg_catalog``): never a connector's."""

    @abstractmethod
    def relation(self, schema: str | None, name: str) -> str | None:
        """The schema holding relation ``name`` (``schema`` as written; None: unqualified),
        or None when an unqualified ``name`` is none of them. A qualified name that is not
        available raises (SqlError, NotFoundError)."""

    @abstractmethod
    def build(
        self, schema: str, name: str, tables: Callable[[], list[TableInfo | ViewInfo]]
    ) -> pa.Table:
        """The rows of a relation; ``tables`` lists the kyma tables and views the caller may
        read."""

    @abstractmethod
    def functions(self) -> Sequence[ScalarUDF]:
        """UDFs registered in every session (``version()``, ``format_type`` …)."""

    @abstractmethod
    def rewrite(self, stmt: exp.Expression) -> exp.Expression:
        """A query with the relations' references resolved, as DataFusion plans it
        (clients' spellings of Postgres constructs: sqlglot rules)."""

    def statement(self, stmt: exp.Expression) -> Callable[[], QueryResult] | None:
        """What runs ``stmt`` when the relations act on it themselves (``SELECT
        pg_cancel_backend(12)``), else None. It needs no scope: it checks whom it may touch."""
        return None
