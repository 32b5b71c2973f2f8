"""A result's columns as DataRow values: Postgres' text format, or binary where Bind asked."""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.pgwire import _messages as m
from kyma.pgwire._binary import binary_column
from kyma.pgwire._types import SIZES, text_column, type_oid


def _text_columns(table: pa.Table) -> list[pa.Array]:
    return [text_column(f, table.column(i)) for i, f in enumerate(table.schema)]


def encoded(table: pa.Table, formats: list[int] | None) -> list[pa.Array]:
    if not formats or not any(formats):
        return _text_columns(table)
    return [
        binary_column(f, table.column(i)) if formats[i] else text_column(f, table.column(i))
        for i, f in enumerate(table.schema)
    ]


def result_formats(codes: list[int], width: int) -> list[int] | None:
    """A format code for each of ``width`` result columns, from Bind's list (none: text;
    one: every column's); None: all text."""
    if not codes or width == 0:
        return None
    if len(codes) == 1:
        return codes * width
    if len(codes) != width:
        raise SqlError(f"Bind gave {len(codes)} result format codes for {width} columns")
    return codes


def describe(result: QueryResult, formats: list[int] | None = None) -> bytes:
    """The RowDescription of ``result``'s columns (NoData when it has none)."""
    if result.table.num_columns == 0:
        return m.NO_DATA
    columns = []
    for i, f in enumerate(result.table.schema):
        oid = type_oid(f)
        columns.append((f.name, oid, SIZES.get(oid, -1), formats[i] if formats else 0))
    return m.row_description(columns)
