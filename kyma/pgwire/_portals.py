"""What a Postgres protocol connection keeps between messages: its prepared statements and
portals (a cursor is a portal DECLARE named), and the result formats a portal asks for."""

from __future__ import annotations

from dataclasses import dataclass

from kyma.engine.query import QueryResult
from kyma.pgwire._encoding import result_formats
from kyma.pgwire._rows import Rows, Window


@dataclass
class Statement:
    sql: str
    param_oids: list[int]  # as Parse declared them (0: unspecified), then as Describe told


@dataclass
class Portal:
    sql: str
    formats: list[int]  # as Bind gave them: none (all text), one for all, or one a column
    result: QueryResult | None = None  # once run: its columns
    rows: Rows | None = None  # once run: what is left to send
    cursor: bool = False  # declared by DECLARE
    hold: bool = False  # WITH HOLD: outlives its transaction block


def formats_of(portal: Portal) -> list[int] | None:
    """A format code a result column, from Bind's list (none: text; one: every column)."""
    assert portal.result is not None
    return result_formats(portal.formats, portal.result.table.num_columns)


def binary_fetch(result: QueryResult) -> list[int] | None:
    """A simple query's FETCH from a BINARY cursor answers binary rows."""
    live = result.live
    if isinstance(live, Window) and live.binary:
        return [1] * result.table.num_columns
    return None
