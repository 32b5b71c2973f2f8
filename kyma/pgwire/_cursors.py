"""DECLARE, FETCH, MOVE and CLOSE on a connection: a cursor is a portal named by DECLARE,
as in Postgres (Describe and Execute reach it by its name, Close closes it). Its query runs
once, at DECLARE; FETCH n sends its next n rows as the engine computes them, so neither a
cursor nor a FETCH holds more than a batch. A cursor ends with its transaction block, unless
declared WITH HOLD (then it lasts until CLOSE or the connection's end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import sqlglot
from sqlglot import exp

from kyma.engine.errors import (
    CursorNotFoundError,
    DuplicateCursorError,
    NoTransactionError,
    SqlError,
)
from kyma.engine.query import QueryResult
from kyma.engine.query.dialect import Cursor, Kyma
from kyma.pgwire._rows import Window

if TYPE_CHECKING:
    from kyma.pgwire._connection import Connection

VERBS = ("declare", "fetch", "move", "close")


def parse(sql: str) -> Cursor | None:
    """The cursor statement ``sql`` is, by its first word (None: another statement)."""
    words = sql.split(None, 1)
    if not words or words[0].lower() not in VERBS:
        return None
    stmt = sqlglot.parse_one(sql, read=Kyma)
    return stmt if isinstance(stmt, Cursor) else None


def run(connection: Connection, stmt: Cursor) -> QueryResult:
    if stmt.verb == "DECLARE":
        return _declare(connection, stmt)
    if stmt.verb == "CLOSE":
        return _close(connection, stmt)
    portal = connection.portals.get(stmt.name)
    if portal is None:
        raise CursorNotFoundError(f'cursor "{stmt.name}" does not exist')
    rows = connection.started(portal)
    if stmt.verb == "MOVE":
        before = rows.sent
        rows.send(stmt.count or 0, _discard, *connection.statement_limits())
        return QueryResult.status_only(f"MOVE {rows.sent - before}")
    window = Window(rows, stmt.count, binary=portal.formats == [1])
    return QueryResult(rows.schema.empty_table(), "FETCH", live=window)


def _declare(connection: Connection, stmt: Cursor) -> QueryResult:
    name = stmt.name
    hold = bool(stmt.args.get("hold"))
    if not hold and not connection.session_().in_transaction:
        raise NoTransactionError("DECLARE CURSOR can only be used in transaction blocks")
    if name in connection.portals:
        raise DuplicateCursorError(f'cursor "{name}" already exists')
    connection.room_for_portal()
    query = stmt.text("query")
    if not isinstance(sqlglot.parse_one(query, read=Kyma), exp.Query):
        raise SqlError(f"DECLARE {name} CURSOR FOR needs a query (SELECT, VALUES, TABLE)")
    result = connection.run(query, stream=True)
    formats = [1] if stmt.args.get("binary") else []
    connection.open_cursor(name, query, formats, result, hold)
    return QueryResult.status_only("DECLARE CURSOR")


def _close(connection: Connection, stmt: Cursor) -> QueryResult:
    if isinstance(stmt.this, exp.Star):
        connection.close_portals(cursors_only=True)
        return QueryResult.status_only("CLOSE CURSOR ALL")
    if stmt.name not in connection.portals:
        raise CursorNotFoundError(f'cursor "{stmt.name}" does not exist')
    connection.close_portal(stmt.name)
    return QueryResult.status_only("CLOSE CURSOR")


def _discard(table: pa.Table) -> None:
    """MOVE reads rows past without sending them."""
