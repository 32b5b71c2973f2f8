"""Where a query's answer goes besides a whole table: to a sink that takes its batches as
they are computed (INSERT … SELECT, CREATE TABLE AS), or as live rows (the Postgres
protocol's streaming); and the batches shaped as the answer names and types them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from kyma.engine.query._decoded import plain
from kyma.engine.query._output_names import renamed
from kyma.engine.query._result import QueryResult
from kyma.engine.query.pg_numeric import RESULT, is_numeric_text, too_long

Sink = Callable[[pa.Schema, Iterator[pa.RecordBatch]], int]
"""Takes a query's answer batch by batch (its schema first) and says how many rows it took."""


@dataclass(frozen=True)
class Out:
    """Where an answer goes: ``sink`` takes its batches as they are computed (nothing is
    kept); ``stream`` answers the first batch and the rest as live rows; else a whole table."""

    sink: Sink | None = None
    stream: bool = False


WHOLE = Out()
"""The answer as a whole table."""


def sunk(result: QueryResult, sink: Sink | None) -> QueryResult:
    """A computed answer handed to ``sink`` (if any) as a streamed one is."""
    if sink is None:
        return result
    rows = sink(result.table.schema, iter(result.table.to_batches()))
    return QueryResult(pa.table({}), result.status, result.stats, [], rowcount=rows)


def as_answer(schema: pa.Schema, batch: pa.RecordBatch) -> pa.RecordBatch:
    """A streamed batch with the answer's names and plain types (``plain``, ``renamed``,
    ``stored``)."""
    if batch.schema.equals(schema):
        return batch
    columns = [_cast(c, f.type) for c, f in zip(batch.columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _cast(column: pa.Array, dtype: pa.DataType) -> pa.Array:
    if column.type == dtype:
        return column
    try:
        return column.cast(dtype)
    except pa.ArrowInvalid:
        if pa.types.is_string(column.type) and pa.types.is_decimal(dtype):
            raise too_long() from None  # numeric text past 20 decimals (``stored``)
        raise


def stored(schema: pa.Schema) -> pa.Schema:
    """An answer's schema as a sink stores it: numeric text (a quotient with each value's
    scale) as the decimal ``kyma_numeric_div`` answers, one scale for the column."""
    fields = [pa.field(f.name, RESULT, f.nullable) if is_numeric_text(f) else f for f in schema]
    return pa.schema(fields, schema.metadata)


def shaped(table: pa.Table, names: list[str] | None) -> pa.Table:
    return renamed(plain(table), names)


def empty_batch(table: pa.Table) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], table.schema)
