"""INSERT INTO t [(columns)] VALUES … | SELECT …: rows handed to the write path.

The engine does not own writes: an ``InsertWriter`` (the ingest write path, injected by the
wiring) coerces, evolves and commits them as one snapshot. VALUES rows go as JSON values (their
constants read as Postgres reads them, ``_values``), so they are coerced exactly as an ingest
body is; a SELECT's Arrow result goes as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pyarrow as pa
from sqlglot import exp

from kyma.engine.catalog import Catalog, DeletionVector
from kyma.engine.errors import (
    DataError,
    IngestError,
    InvalidDatetimeError,
    SqlError,
    UnsupportedStatementError,
)
from kyma.engine.query._access import WRITE, Access
from kyma.engine.query._parse import identifier, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._values import literal
from kyma.engine.types import DEFAULT_COLUMN_NAMES

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

    def insert_arrow(self, table: str, data: pa.Table) -> int: ...

    def update_arrow(self, table: str, data: pa.Table, vectors: list[DeletionVector]) -> int:
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


def run(
    stmt: exp.Insert,
    catalog: Catalog,
    writer: InsertWriter | None,
    select: Callable[[exp.Query], pa.Table],
) -> QueryResult:
    """Write the rows of ``stmt``; the status is Postgres' ``INSERT 0 <rows>``."""
    if writer is None:
        raise UnsupportedStatementError("INSERT: this engine has no write path")
    for arg, clause in _REFUSED.items():
        if stmt.args.get(arg):
            raise UnsupportedStatementError(f"INSERT: {clause} is not supported")
    table, named = target(stmt)
    info = catalog.get_table(table)  # NotFoundError before anything runs
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
            count = writer.insert_rows(table, rows)
        except IngestError as e:  # coercion names the line of a row: say VALUES row
            said = _in_values(e)
            if types.get(e.field or "") == "timestamp":  # Postgres's 22007
                raise InvalidDatetimeError(str(said)) from None
            raise said from None
    elif isinstance(source, exp.Query):
        result = select(source)
        names = _select_names(result.column_names, columns, named is not None, table)
        count = writer.insert_arrow(table, result.rename_columns(names))
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


def _in_values(error: IngestError) -> IngestError:
    """``line 2, field 'n': …`` of the write path as ``VALUES row 2, column 'n': …``."""
    message, where = str(error), f"line {error.line}"
    if error.line is None or not message.startswith(where):
        return error
    rest = message[len(where) :]
    if error.field is not None:
        rest = rest.replace(f", field {error.field!r}", f", column {error.field!r}", 1)
    return IngestError(f"VALUES row {error.line}{rest}", error.line, error.field)
