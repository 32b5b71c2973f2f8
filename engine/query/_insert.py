"""INSERT INTO t [(columns)] VALUES … | SELECT …, and CREATE TABLE … AS SELECT: rows handed
to the write path.

The engine does not own writes: an ``InsertWriter`` (the ingest write path, injected by the
wiring) coerces, evolves and commits them as one snapshot. VALUES rows go as JSON values (their
constants read as Postgres reads them, ``_values``), so they are coerced exactly as an ingest
body is; a SELECT's Arrow answer streams to it batch by batch, never collected whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import Catalog, DeletionVector, Payload
from kyma.engine.catalog._views import pg_type_name
from kyma.engine.errors import (
    DataError,
    DuplicateColumnError,
    DuplicateRelationError,
    IngestError,
    InvalidDatetimeError,
    NotFoundError,
    SchemaError,
    SqlError,
    UnsupportedStatementError,
    WrongObjectTypeError,
)
from kyma.engine.query._access import WRITE, Access
from kyma.engine.query._output_names import output_names
from kyma.engine.query._parse import identifier, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._values import literal
from kyma.engine.query._writable import refuse_storage
from kyma.engine.types import (
    DEFAULT_COLUMN_NAMES,
    DEFAULT_COLUMNS,
    KYMA_TYPE_KEY,
    Column,
    KymaType,
)

# Clauses of Postgres' INSERT that kyma's append-only tables cannot honour.
_REFUSED = {
    "returning": "RETURNING",
    "conflict": "ON CONFLICT",
    "overwrite": "INSERT OVERWRITE",
    "where": "WHERE",
    "partition": "PARTITION",
    "ignore": "INSERT IGNORE",
    "by_name": "BY NAME",
}


class InsertWriter(Protocol):
    """Commits one INSERT (or UPDATE) as one snapshot of ``table``; returns how many rows
    it wrote."""

    def insert_rows(self, table: str, rows: list[dict[str, Any]]) -> int: ...

    def insert_batches(
        self,
        table: str,
        schema: pa.Schema,
        batches: Iterator[pa.RecordBatch],
        *,
        replace: bool = False,
        payload: Payload | None = None,
    ) -> int:
        """A query's answer as it streams (``schema``: its columns, named as the table's);
        ``replace``: in place of every row the table had; ``payload`` runs in the commit."""
        ...

    def update_arrow(
        self,
        table: str,
        data: pa.Table,
        vectors: list[DeletionVector],
        *,
        payload: Payload | None = None,
    ) -> int:
        """``data`` written and ``vectors`` (the rows it replaces) committed together."""
        ...


def target(stmt: exp.Insert) -> tuple[str, list[str] | None]:
    """The table an INSERT writes and the columns it names (None: the table's, in order)."""
    into = stmt.this
    if isinstance(into, exp.Schema):
        return table_name(into.this), [identifier(c) for c in into.expressions]
    return table_name(into), None


def access(stmt: exp.Insert, reads: Callable[[exp.Query], Access]) -> list[Access]:
    """A write of the target table, and what its SELECT (if any) reads."""
    needs = [Access(WRITE, frozenset({target(stmt)[0]}))]
    if isinstance(stmt.expression, exp.Query):
        needs.append(reads(stmt.expression))
    return needs


Stream = Callable[[exp.Query, Callable[[pa.Schema, Iterator[pa.RecordBatch]], int]], int]
"""Runs a query, handing its answer's schema and batches to a sink; the rows it took."""


def run(
    stmt: exp.Insert, catalog: Catalog, writer: InsertWriter | None, stream: Stream
) -> QueryResult:
    """Write the rows of ``stmt``; the status is Postgres' ``INSERT 0 <rows>``."""
    if writer is None:
        raise UnsupportedStatementError("INSERT: this engine has no write path")
    for arg, clause in _REFUSED.items():
        if stmt.args.get(arg):
            raise UnsupportedStatementError(f"INSERT: {clause} is not supported")
    table, named = target(stmt)
    try:
        info = catalog.get_table(table)  # NotFoundError before anything runs
    except NotFoundError:
        view = catalog.get_views([table]).get(table)
        if view is not None and view.materialized:
            raise WrongObjectTypeError(f'cannot change materialized view "{table}"') from None
        if view is not None:
            raise UnsupportedStatementError(
                f'cannot insert into view "{table}": kyma\'s views are read-only'
            ) from None
        raise
    refuse_storage(catalog, table)
    # Without a list: the declared columns, in order (``_timestamp`` and ``props`` are kyma's).
    declared = [c.name for c in info.columns if c.name not in DEFAULT_COLUMN_NAMES]
    columns = named if named is not None else declared
    if len(set(columns)) != len(columns):
        raise SqlError(f"INSERT: a column is named twice in {columns}")
    source = stmt.expression
    if isinstance(source, exp.Values):
        types = {c.name: c.type.name for c in info.columns}
        exact = named is not None
        rows = [_row(i, t, columns, types, exact) for i, t in enumerate(source.expressions, 1)]
        try:
            if _non_finite(rows):  # NDJSON has no NaN nor infinity: these rows go as Arrow
                batch = pa.RecordBatch.from_pydict({c: [r.get(c) for r in rows] for c in columns})
                count = writer.insert_batches(table, batch.schema, iter([batch]))
            else:
                count = writer.insert_rows(table, rows)
        except IngestError as e:  # coercion names the line of a row: say VALUES row
            said = _in_values(e)
            if types.get(e.field or "") == "timestamp":  # Postgres's 22007
                raise InvalidDatetimeError(str(said)) from None
            raise said from None
    elif isinstance(source, exp.Query):

        def write(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
            names = _select_names(schema.names, columns, named is not None, table)
            renamed = pa.schema([f.with_name(n) for f, n in zip(schema, names, strict=True)])
            assert writer is not None
            return writer.insert_batches(table, renamed, _renamed(renamed, batches))

        count = stream(source, write)
    else:
        raise UnsupportedStatementError("INSERT: expected VALUES or a SELECT")
    return QueryResult(pa.table({}), f"INSERT 0 {count}", rowcount=count)


def _select_names(got: list[str], columns: list[str], exact: bool, table: str) -> list[str]:
    """The target of each column a SELECT returns: by position over ``columns``; without a
    column list, ``_timestamp`` and ``props`` (as ``SELECT *`` of a kyma table returns them)
    keep their names and may be left out."""
    own = [] if exact else [n for n in got if n in DEFAULT_COLUMN_NAMES]
    rest = len(got) - len(own)
    if rest > len(columns) or (exact and rest < len(columns)):
        raise SqlError(
            f"INSERT: the SELECT returns {len(got)} columns, expected {len(columns)}"
            f" ({', '.join(columns)}) for table {table!r}"
        )
    targets = iter(columns)
    return [n if n in own else next(targets) for n in got]


def _row(
    number: int, values: exp.Expression, columns: list[str], types: dict[str, str], exact: bool
) -> dict[str, Any]:
    """One VALUES row; without ``exact`` (no column list) it may fill only the first columns,
    as in Postgres."""
    items = values.expressions if isinstance(values, exp.Tuple) else [values]
    if len(items) > len(columns) or (exact and len(items) < len(columns)):
        raise SqlError(
            f"INSERT: VALUES row {number} has {len(items)} values, expected {len(columns)}"
            f" ({', '.join(columns)})"
        )
    row: dict[str, Any] = {}
    for name, item in zip(columns, items, strict=False):
        try:
            row[name] = literal(item, types.get(name))
        except DataError as e:  # 22P02, 22003: its class, said where
            raise type(e)(f"VALUES row {number}, column {name!r}: {e}") from None
    return row


def _non_finite(rows: list[dict[str, Any]]) -> bool:
    return any(type(v) is float and not math.isfinite(v) for row in rows for v in row.values())


def _in_values(error: IngestError) -> IngestError:
    """``line 2, field 'n': …`` of the write path as ``VALUES row 2, column 'n': …``."""
    message, where = str(error), f"line {error.line}"
    if error.line is None or not message.startswith(where):
        return error
    rest = message[len(where) :]
    if error.field is not None:
        rest = rest.replace(f", field {error.field!r}", f", column {error.field!r}", 1)
    return IngestError(f"VALUES row {error.line}{rest}", error.line, error.field)


def create_table_as(
    stmt: exp.Create, catalog: Catalog, writer: InsertWriter | None, stream: Stream
) -> QueryResult:
    """CREATE TABLE [IF NOT EXISTS] t [(columns)] AS query: a table of the query's column
    types holding its rows, written in one snapshot; the status is Postgres' ``SELECT <rows>``."""
    if writer is None:
        raise UnsupportedStatementError("CREATE TABLE AS: this engine has no write path")
    target = stmt.this
    written = [identifier(c) for c in target.expressions] if isinstance(target, exp.Schema) else []
    table = table_name(target.this if isinstance(target, exp.Schema) else target, creating=True)
    if catalog.get_tables([table]) or catalog.get_views([table]):  # before the query runs
        if stmt.args.get("exists"):
            return QueryResult.status_only("CREATE TABLE AS")  # Postgres: a notice, no rows
        raise DuplicateRelationError(f'relation "{table}" already exists')
    figured = output_names(stmt.expression)  # the answer keeps no duplicate: these may

    def write(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
        schema = named(schema, figured, written)
        columns = [column_of(field) for field in schema]
        catalog.create_table(table, [c for c in columns if c.name not in DEFAULT_COLUMN_NAMES])
        try:
            assert writer is not None
            return writer.insert_batches(table, schema, _renamed(schema, batches))
        except BaseException:
            catalog.drop_table(table, if_exists=True)  # no table is left without its rows
            raise

    count = stream(stmt.expression, write)
    return QueryResult(pa.table({}), f"SELECT {count}", rowcount=count)


def named(schema: pa.Schema, figured: list[str] | None, written: list[str]) -> pa.Schema:
    """A query's answer ``schema`` with Postgres's names for its columns: those ``written``
    first, then those ``figured`` (``output_names``) when it has one per column; 42601 for
    more written names than columns, 42701 for a name twice."""
    names = figured if figured is not None and len(figured) == len(schema) else schema.names
    if len(written) > len(names):
        raise SqlError("too many column names were specified")
    names = [*written, *names[len(written) :]]
    for position, name in enumerate(names):
        if name in names[:position]:
            raise DuplicateColumnError(f'column "{name}" specified more than once')
    return pa.schema([f.with_name(n) for f, n in zip(schema, names, strict=True)])


def _renamed(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)


def column_of(field: pa.Field) -> Column:
    """The kyma column that stores a query's result column (SchemaError when none does)."""
    dtype = field.type
    if pa.types.is_null(dtype):  # an untyped NULL: text, as Postgres makes it
        return Column(field.name, KymaType("string"))
    if pa.types.is_integer(dtype) and dtype.bit_width <= 32 and pa.types.is_signed_integer(dtype):
        return Column(field.name, KymaType("int"))
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return Column(field.name, KymaType("string"))
    if (field.metadata or {}).get(KYMA_TYPE_KEY) == b"dynamic":
        return Column(field.name, KymaType("dynamic"))
    try:
        kind = KymaType.from_arrow(dtype)
    except SchemaError:
        raise SchemaError(
            f"CREATE TABLE AS: column {field.name!r} is of type {pg_type_name(field)}, which"
            " kyma does not store; cast it (to bigint, double precision, text, timestamptz…)"
        ) from None
    if field.name in DEFAULT_COLUMN_NAMES and Column(field.name, kind) not in DEFAULT_COLUMNS:
        raise SchemaError(
            f"CREATE TABLE AS: column {field.name!r} is a default column of every table and"
            f" must be {next(c.type for c in DEFAULT_COLUMNS if c.name == field.name)}"
        )
    return Column(field.name, kind)
