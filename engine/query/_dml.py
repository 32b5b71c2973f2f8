"""DELETE and UPDATE: row-level changes committed as one snapshot through the CAS.

The WHERE clause runs as a query over the table at its current snapshot S, whose scan adds
each row's extent and position (``deletes.ROW_COLUMNS``), so DataFusion finds the rows,
vectorized, after the same pruning cascade as any query. Each touched extent's deletion
vector grows by those positions and the commit replaces the extent's manifest row by a copy
carrying it (``DeletionVector``). Rows committed by others after S are in new extents,
which the commit leaves alone; if an extent it read was changed meanwhile (another DELETE,
compaction), the commit is refused and the statement runs again on the new head.

UPDATE is a DELETE of the matched rows plus an insert of their new values, through the
write path's coercion, in the same snapshot. Tables a CDC connector keeps in sync refuse
both: their next change would contradict the edit.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from kyma.engine import deletes
from kyma.engine.catalog import Catalog, DeletionVector, TableInfo
from kyma.engine.errors import (
    NotFoundError,
    StaleCommitError,
    UndefinedColumnError,
    UnsupportedStatementError,
)
from kyma.engine.query._insert import InsertWriter
from kyma.engine.query._parse import identifier, table_name
from kyma.engine.query._result import QueryResult
from kyma.engine.query._values import literal
from kyma.engine.query._writable import refuse_storage, refuse_view
from kyma.engine.query.rewrite import current_state

ATTEMPTS = 20
"""Times a statement is run again after another commit changed an extent it read."""

# Clauses of Postgres' DELETE and UPDATE kyma does not run.
_REFUSED = {
    "returning": "RETURNING",
    "using": "USING",
    "from_": "FROM",
    "joins": "FROM",
    "with_": "WITH",
    "order": "ORDER BY",
    "limit": "LIMIT",
}

Select = Callable[[exp.Query, int, str], pa.Table]
"""Runs a query at a snapshot with the row columns of a table's scan: its answer."""


def delete(stmt: exp.Delete, catalog: Catalog, select: Select) -> QueryResult:
    """Run ``DELETE FROM t [WHERE …]``; the status is Postgres' ``DELETE <rows>``."""
    _refuse_clauses(stmt, "DELETE")
    table = table_name(stmt.this)
    for _ in range(ATTEMPTS):
        info = _target(catalog, table, "DELETE")
        if info.current_snapshot_id is None:
            return _done("DELETE", 0)
        found = select(_query(stmt, []), info.current_snapshot_id, table)
        vectors, count = deletion_vectors(catalog, table, found)
        if not vectors:
            return _done("DELETE", 0)
        summary = {"source": "delete", "deleted_rows": count}
        try:
            catalog.commit(table, [], summary=summary, deletes=vectors)
        except StaleCommitError:
            continue
        return _done("DELETE", count)
    raise StaleCommitError(f"DELETE on {table!r}: its extents kept changing; try again")


def update(
    stmt: exp.Update, catalog: Catalog, select: Select, writer: InsertWriter | None
) -> QueryResult:
    """Run ``UPDATE t SET c = … [WHERE …]``; the status is Postgres' ``UPDATE <rows>``."""
    if writer is None:
        raise UnsupportedStatementError("UPDATE: this engine has no write path")
    _refuse_clauses(stmt, "UPDATE")
    table = table_name(stmt.this)
    for _ in range(ATTEMPTS):
        info = _target(catalog, table, "UPDATE")
        if info.current_snapshot_id is None:
            return _done("UPDATE", 0)
        found = select(_query(stmt, _assignments(stmt, info)), info.current_snapshot_id, table)
        vectors, count = deletion_vectors(catalog, table, found)
        if not vectors:
            return _done("UPDATE", 0)
        rows = found.drop_columns(list(deletes.ROW_COLUMNS))
        try:
            writer.update_arrow(table, rows, vectors)
        except StaleCommitError:
            continue
        return _done("UPDATE", count)
    raise StaleCommitError(f"UPDATE on {table!r}: its extents kept changing; try again")


def _refuse_clauses(stmt: exp.Expression, verb: str) -> None:
    for arg, clause in _REFUSED.items():
        if stmt.args.get(arg):
            raise UnsupportedStatementError(f"{verb}: {clause} is not supported")


def _target(catalog: Catalog, table: str, verb: str) -> TableInfo:
    try:
        info = catalog.get_table(table)
    except NotFoundError:
        refuse_view(catalog, table)
        raise
    refuse_storage(catalog, table)
    if current_state.is_cdc(info.options):
        raise UnsupportedStatementError(
            f"{verb}: table {table!r} is kept in sync by a CDC connector; change the rows in"
            " its source database (an edit here would be contradicted by the next change)"
        )
    return info


def _assignments(stmt: exp.Update, info: TableInfo) -> list[exp.Expr]:
    """The table's columns in order, each as it is or as ``SET`` gives it."""
    given: dict[str, exp.Expression] = {}
    for item in stmt.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise UnsupportedStatementError(
                f"UPDATE: expected SET column = value, got {item.sql()!r}"
            )
        name = identifier(item.this.this)
        column = info.column(name)
        if column is None:
            raise UndefinedColumnError(f'column "{name}" of relation "{info.name}" does not exist')
        if name in given:
            raise UnsupportedStatementError(f'multiple assignments to same column "{name}"')
        value = item.expression
        if isinstance(value, exp.Literal) and value.is_string:
            literal(value, column.type.name)  # Postgres reads it as the column's type: 22P02
        given[name] = value
    return [
        exp.alias_(given[c.name].copy(), c.name, quoted=True)
        if c.name in given
        else exp.column(c.name, quoted=True)
        for c in info.columns
    ]


def _query(stmt: exp.Delete | exp.Update, columns: list[exp.Expr]) -> exp.Select:
    """``SELECT <row columns>, <columns> FROM t WHERE …`` (the statement's WHERE)."""
    rows = [exp.column(name, quoted=True) for name in deletes.ROW_COLUMNS]
    query = exp.select(*rows, *columns).from_(stmt.this.copy())
    where = stmt.args.get("where")
    return query.where(where.this.copy()) if where is not None else query


def deletion_vectors(
    catalog: Catalog, table: str, found: pa.Table
) -> tuple[list[DeletionVector], int]:
    """The deletion vector of each extent ``found`` has rows of (its old one grown by their
    positions), and how many rows they add."""
    if found.num_rows == 0:
        return [], 0
    extent, row = deletes.ROW_COLUMNS
    grouped = found.select([extent, row]).group_by(extent).aggregate([(row, "list")])
    ids = grouped.column(extent).to_pylist()
    old = {e.extent_id: e for e in catalog.extents(table, ids)}  # as the scan read them
    vectors, count = [], 0
    for extent_id, rows in zip(ids, grouped.column(f"{row}_list"), strict=True):
        before = old[extent_id]
        positions = rows.values.to_numpy().astype(np.uint32)
        vector, held = deletes.merge(before.deletes, positions)
        vectors.append(DeletionVector(extent_id, str(uuid.uuid4()), vector, held))
        count += held - before.deleted_rows
    return vectors, count


def _done(verb: str, count: int) -> QueryResult:
    return QueryResult(pa.table({}), f"{verb} {count}", rowcount=count)
