"""Views: CREATE [OR REPLACE] VIEW, DROP VIEW, and their expansion where a query names one.

A view is stored as its query's text (kyma's dialect) with its output columns; a query that
names it reads ``(<its query>) AS name(<its columns>)`` instead, planned with the rest of the
statement (nested views expand in turn; views that read each other are 42P17, as Postgres
finds them when the query runs). The planner expands them (``SelectPlanner``), looking views
up only under names no table has, so a query of tables pays nothing for views. Reading a
view needs read access to the view's name (checked with the statement) and to every table
its query reads (checked by the planner as it expands the view, against the view as it is
defined then): a token cannot read through a view what it cannot read itself.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import Catalog, ViewInfo
from kyma.engine.errors import (
    DuplicateColumnError,
    InfiniteRecursionError,
    SqlError,
    UnsupportedStatementError,
)
from kyma.engine.query._output_names import output_names
from kyma.engine.query._parse import identifier, parse, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query.dialect import Kyma
from kyma.engine.query.rewrite.time_travel import split_versioned

MAX_DEPTH = 64
"""Views nested deeper than this are refused (Postgres has no limit but its stack)."""

LocalTables = Callable[[exp.Expression], list[tuple[str, exp.Table]]]
Lookup = Callable[[set[str]], dict[str, ViewInfo]]
"""The views among some names (the planner looks them up only for names no table has)."""


def expand(
    stmt: exp.Expression, views_of: Lookup, local_tables: LocalTables
) -> tuple[exp.Expression, set[str]]:
    """``stmt`` with every view it names replaced by the view's query (in place), and the
    names of the views expanded."""
    expanded: set[str] = set()
    _expand(stmt, views_of, (), local_tables, expanded)
    return stmt, expanded


def _expand(
    node: exp.Expression,
    views_of: Lookup,
    path: tuple[str, ...],
    local_tables: LocalTables,
    expanded: set[str],
) -> None:
    refs = local_tables(node)
    views = views_of({split_versioned(raw)[0] for raw, _ in refs})
    for raw, table in refs if views else ():
        view = views.get(raw)
        if view is None:
            continue
        if raw in path or len(path) >= MAX_DEPTH:
            first = path[0] if path else raw
            raise InfiniteRecursionError(
                f'infinite recursion detected in rules for relation "{first}"'
            )
        body = parse(view.query)
        _expand(body, views_of, (*path, raw), local_tables, expanded)
        expanded.add(raw)
        table.replace(_derived(body, table, view))


def _derived(body: exp.Expression, table: exp.Table, view: ViewInfo) -> exp.Subquery:
    """``(body) AS alias(columns)``: the reference's alias and column aliases, else the
    view's name and columns."""
    alias = table.args.get("alias")
    written = list(alias.columns) if alias is not None else []
    columns = [
        *written,
        *(exp.to_identifier(n, quoted=True) for n in view.column_names[len(written) :]),
    ]
    name = alias.this if alias is not None and alias.this else exp.to_identifier(view.name)
    return exp.Subquery(this=body, alias=exp.TableAlias(this=name, columns=columns))


def is_view(stmt: exp.Create | exp.Drop) -> bool:
    """Whether a CREATE or DROP is of a view (not a materialized one)."""
    return str(stmt.args.get("kind", "")).upper() == "VIEW"


def create_view(
    catalog: Catalog,
    stmt: exp.Create,
    describe: Callable[[exp.Expression], pa.Schema],
    local_tables: LocalTables,
) -> QueryResult:
    """CREATE [OR REPLACE] VIEW name [(columns)] AS query. ``describe`` runs a query to no
    rows and answers its columns (names as Postgres gives them)."""
    target = stmt.this
    written = [identifier(c) for c in target.expressions] if isinstance(target, exp.Schema) else []
    name = table_name(target.this if isinstance(target, exp.Schema) else target, creating=True)
    query = stmt.expression
    if not isinstance(query, exp.Query):
        raise UnsupportedStatementError("CREATE VIEW needs AS followed by a query")
    properties = stmt.args.get("properties")
    if properties is not None and properties.find(exp.MaterializedProperty):
        raise UnsupportedStatementError("CREATE MATERIALIZED VIEW is not supported")
    if stmt.args.get("exists") or properties is not None:
        raise UnsupportedStatementError("CREATE VIEW: only [OR REPLACE] VIEW name AS query")
    text = query.sql(dialect=Kyma)
    body = parse(text)
    schema = describe(body)
    figured = output_names(body)
    if figured is not None and len(figured) == len(schema):
        schema = pa.schema([f.with_name(n) for f, n in zip(schema, figured, strict=True)])
    if len(written) > len(schema):
        raise SqlError("CREATE VIEW specifies more column names than columns")
    names = [*written, *schema.names[len(written) :]]
    for position, column in enumerate(names):
        if column in names[:position]:
            raise DuplicateColumnError(f'column "{column}" specified more than once')
    if isinstance(body, exp.Select) and [type(e) for e in body.expressions] == [exp.Star]:
        # ``SELECT *`` stands for the columns it had: a column the table gains later is
        # not the view's, as in Postgres.
        query = query.copy()
        query.set("expressions", [exp.column(n, quoted=True) for n in schema.names])
        text = query.sql(dialect=Kyma)
    schema = pa.schema([f.with_name(n) for f, n in zip(schema, names, strict=True)])
    reads = sorted({split_versioned(raw)[0] for raw, _ in local_tables(body)})
    replace = bool(stmt.args.get("replace"))
    catalog.create_view(name, text, schema, reads, replace=replace)
    return QueryResult.status_only("CREATE VIEW")


def drop_view(catalog: Catalog, stmt: exp.Drop) -> QueryResult:
    """DROP [MATERIALIZED] VIEW [IF EXISTS] v, … [CASCADE | RESTRICT]."""
    kind = "materialized view" if stmt.args.get("materialized") else "view"
    names = [table_name(t) for t in stmt.args.get("tables") or [stmt.this]]
    exists, cascade = bool(stmt.args.get("exists")), bool(stmt.args.get("cascade"))
    catalog.drop_relations(names, kind, if_exists=exists, cascade=cascade)
    return QueryResult.status_only(f"DROP {kind.upper()}")
