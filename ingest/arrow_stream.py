"""An Arrow stream into a table as one snapshot: what a bulk-ingest client (ADBC) sends.

A new table takes its columns from the stream's schema (``table_columns``); an existing one
keeps its own and widens by the table's evolution rule, as for a Parquet file drop: a new
field becomes a ``string`` column (or, in a ``typed`` table, a column of its Arrow type), an
unsafe name goes to ``props``. Batches are cast to the table's types by the write path and
gathered into extents of up to ``EXTENT_ROWS`` rows; ``replace`` retires the table's rows
in the same snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from kyma.engine.catalog import TableInfo, schema_evolution
from kyma.engine.errors import SchemaError
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.tabular import parquet_columns
from kyma.ingest.write_path import IngestAck, WritePath

EXTENT_ROWS = 128 * 1024
"""Rows gathered into one extent (clients send batches of any size, often small)."""

_NARROW = {
    pa.int8(): "int",
    pa.int16(): "int",
    pa.uint8(): "int",
    pa.uint16(): "int",
    pa.uint32(): "long",
    pa.float16(): "real",
    pa.float32(): "real",
    pa.large_string(): "string",
    pa.string_view(): "string",
    pa.null(): "string",
}


def column_type(dtype: pa.DataType) -> KymaType:
    """The kyma type that stores Arrow ``dtype``; SchemaError for one it cannot hold exactly.

    >>> [column_type(t).name for t in (pa.int16(), pa.timestamp("us"), pa.list_(pa.int64()))]
    ['int', 'timestamp', 'array(long)']
    >>> column_type(pa.struct([("a", pa.int64())])).name
    'dynamic'
    """
    if dtype in _NARROW:
        return KymaType(_NARROW[dtype])
    if pa.types.is_struct(dtype) or pa.types.is_map(dtype):
        return KymaType("dynamic")
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        element = column_type(dtype.value_type)
        return element if element.name == "dynamic" else KymaType.array(element)
    if pa.types.is_binary(dtype):  # kyma's own binary is CBOR: raw bytes are not
        raise SchemaError(f"Arrow type {dtype} has no kyma type")
    return KymaType.from_arrow(dtype)


def table_columns(schema: pa.Schema) -> list[Column]:
    """The columns a new table takes from ``schema`` (``_timestamp`` and ``props`` are every
    table's own); SchemaError names a field of a type kyma does not store."""
    columns = []
    for field in schema:
        if field.name in DEFAULT_COLUMN_NAMES:
            continue
        try:
            columns.append(Column(field.name, column_type(field.type)))
        except SchemaError as e:
            raise SchemaError(f"column {field.name!r}: {e}") from None
    return columns


def ingest_stream(
    write_path: WritePath,
    table: str,
    schema: pa.Schema,
    batches: Iterable[pa.RecordBatch],
    *,
    replace: bool = False,
    source: str,
) -> IngestAck:
    """Commit the stream into the existing ``table`` as one snapshot (widened first for the
    fields it lacks); with ``replace`` the snapshot holds these rows only."""
    info = _fit(write_path, table, schema)
    rows = (parquet_columns(batch, info, True) for batch in batches)
    return write_path.ingest_batches(table, _gathered(rows), source=source, replace=replace)


def _fit(write_path: WritePath, table: str, schema: pa.Schema) -> TableInfo:
    """The table, widened by the columns its evolution rule grants the stream's new fields."""
    catalog = write_path.catalog
    info = catalog.get_table(table)
    plan = plan_evolution(schema.names, info.columns, evolve=True)
    if not plan.new_columns:
        return info
    typed = schema_evolution(info.options) == "typed"
    new = [
        Column(name, column_type(schema.field(name).type) if typed else KymaType("string"))
        for name in plan.new_columns
    ]
    return catalog.add_columns(table, new, if_not_exists=True)


def _gathered(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Batches of one schema joined up to EXTENT_ROWS rows (a batch past it passes whole)."""
    held: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        if held and (batch.schema != held[0].schema or count + batch.num_rows > EXTENT_ROWS):
            yield pa.concat_batches(held)
            held, count = [], 0
        held.append(batch)
        count += batch.num_rows
    if held:
        yield pa.concat_batches(held)
