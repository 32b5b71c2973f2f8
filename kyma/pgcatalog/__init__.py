"""Postgres' catalog over kyma's tables: ``information_schema`` (tables, columns, schemata),
a small ``pg_catalog`` (see ``_relations``) and the server functions clients call
(``version()``, ``current_schema()``, ``format_type``, ``pg_get_…``), for psql's ``\\d``,
pgcli's completion and the schema browsers of BI tools.

The Postgres protocol, ``POST /v1/query`` and Flight SQL all ask ``answer`` first. A statement
it takes runs in its own DataFusion context over Arrow tables built from the catalog, holding
only the tables the caller's token may read: a table-limited token sees only its tables. It
runs within the query engine's limits (timeout, memory, concurrency, result size) and can be
cancelled, as any statement.
"""

from __future__ import annotations

import re

import pyarrow as pa

from kyma.auth import Principal
from kyma.engine.errors import SqlError
from kyma.engine.query import QueryEngine, QueryResult
from kyma.engine.query._datafusion import run_datafusion
from kyma.engine.query._guard import check_statement
from kyma.engine.query._limits import Cancel, session_context
from kyma.pgcatalog import _functions, _relations, _rewrite
from kyma.pgcatalog._information_schema import VIEWS

_STRING = re.compile(r"'(?:[^']|'')*'")
# a connector's own catalog (src.information_schema.tables): federation's, not this module's
_CONNECTOR_CATALOG = re.compile(r'[\w"]\s*\.\s*"?(?:information_schema|pg_catalog)"?\s*\.', re.I)
_PG_RELATION = re.compile(r"\b(" + "|".join(_relations.RELATIONS) + r")\b", re.I)
_EMPTY_RELATION = re.compile(r"\b(" + "|".join(_relations.EMPTY) + r")\b", re.I)
_FUNCTION = re.compile(r"\b(" + "|".join(_functions.FUNCTIONS) + r")\s*\(", re.I)
_FROM_TABLE = re.compile(r"\bFROM\s+(?!unnest\s*\()", re.I)  # FROM unnest(...): no table
_CALL = re.compile(r"(?:\w+\.)?(\w+)\(.*\)", re.S)


def answer(
    sql: str, query: QueryEngine, caller: Principal, cancel: Cancel | None = None
) -> QueryResult | None:
    """The result of a statement over ``information_schema`` or ``pg_catalog``'s relations,
    or of one that calls only catalog functions (``SELECT version()``); None for any other
    statement. ``cancel``, set while it runs, cancels it (QueryCancelledError)."""
    code = _STRING.sub("''", sql)  # a name inside a string literal is no reference
    if _CONNECTOR_CATALOG.search(code):
        return None
    views = _rewrite.views(code)
    relations = {m.group(1).lower() for m in _PG_RELATION.finditer(code)}
    empty = _EMPTY_RELATION.search(code)
    # a function answers only without a table: `SELECT version(), count(*) FROM t` is no
    # catalog statement, `SELECT * FROM unnest(current_schemas(true))` is one
    function = _FUNCTION.search(code) and not _FROM_TABLE.search(code)
    if not views and not relations and not empty and not function:
        return None
    caller.require("read")
    limits = query.limits  # the statement's size and depth, as the engine bounds them
    check_statement(sql, limits.max_statement_bytes, limits.max_expression_depth)
    if empty:  # no indexes, constraints, policies… in kyma: no rows
        return QueryResult(pa.table({"?column?": pa.array([], pa.string())}), "OK")
    unknown = sorted(views - set(VIEWS))
    if unknown:
        raise SqlError(
            f"information_schema.{unknown[0]} is not available: kyma has "
            + ", ".join(f"information_schema.{v}" for v in VIEWS)
        )
    context = session_context(limits)
    _functions.register(context)
    tables = [info for info in query.catalog.list_tables() if caller.may_touch(info.name)]
    builders = {f"information_schema_{v}": VIEWS[v] for v in views}
    builders.update({r: _relations.RELATIONS[r] for r in relations})
    for name, build in builders.items():
        built = build(tables)
        batches = built.to_batches() or [pa.RecordBatch.from_pylist([], built.schema)]
        context.register_record_batches(name, [batches])
    local = _rewrite.local(sql)
    table = query.gate.run(lambda: run_datafusion(context, local, limits=limits), cancel)
    return QueryResult(table.rename_columns(_postgres_names(table.column_names)), "OK")


def _postgres_names(names: list[str]) -> list[str]:
    """A function call's column named after the function, as Postgres names it.

    >>> _postgres_names(["version()", "UNNEST(current_schemas(Boolean(true)))", "relname"])
    ['version', 'unnest', 'relname']
    """
    return [match.group(1).lower() if (match := _CALL.fullmatch(n)) else n for n in names]
