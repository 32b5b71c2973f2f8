"""CSV text and Parquet batches → a table's columns, shared by file-drop and bulk loads.

Columns the table has are converted to its types with Arrow casts (CSV is read as text);
fields it lacks go to ``props`` (the evolution rule's overflow) or are dropped. The caller
decides evolution first: these functions never change the catalog.
"""

from __future__ import annotations

import json
from datetime import UTC

import cbor2
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import IngestError
from kyma.engine.types import Column

_ZONE = r"([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$"


def csv_columns(
    batch: pa.RecordBatch, info: TableInfo, first_line: int, evolve: bool
) -> pa.RecordBatch:
    """A CSV batch read as text, converted to the table's column types (empty is null);
    fields the table lacks go to ``props`` when evolving, else are dropped. IngestError
    names the line (``first_line`` is the batch's first) and field of a bad value."""
    columns: dict[str, pa.Array] = {}
    overflow: list[str] = []
    for name, values in zip(batch.schema.names, batch.columns, strict=True):
        column = info.column(name)
        if column is None:
            overflow += [name] if evolve else []
            continue
        values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)
        columns[name] = _from_text(values, column, first_line)
    if overflow:
        columns["props"] = _props(batch, overflow)
    return pa.RecordBatch.from_pydict(columns)


def _from_text(values: pa.Array, column: Column, first_line: int) -> pa.Array:
    kind = column.type.name
    if kind == "string":
        return values
    if kind == "dynamic":
        return pa.array([None if v is None else cbor2.dumps(v) for v in values.to_pylist()])
    if column.type.vector_dim is not None:
        raise IngestError(f"field {column.name!r}: vector columns cannot be read from CSV")
    if kind == "timestamp":  # no zone means UTC, as everywhere in kyma
        no_zone = pc.invert(pc.match_substring_regex(values, _ZONE))
        values = pc.if_else(no_zone, pc.binary_join_element_wise(values, "Z", ""), values)
    target = column.type.to_arrow()
    try:
        return pc.cast(values, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        for index, value in enumerate(values.to_pylist()):  # only to name the bad line
            try:
                pc.cast(pa.array([value], pa.string()), target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                line = first_line + index
                raise IngestError(
                    f"line {line}, field {column.name!r}: expected {kind}, got {value!r}",
                    line,
                    column.name,
                ) from None
        raise


def parquet_columns(batch: pa.RecordBatch, info: TableInfo, evolve: bool) -> pa.RecordBatch:
    """A Parquet batch as the table's columns: types kept (the write path casts them), fields
    the table lacks to ``props`` when evolving (else dropped), text for string columns."""
    columns: dict[str, pa.Array] = {}
    overflow: list[str] = []
    for name, values in zip(batch.schema.names, batch.columns, strict=True):
        column = info.column(name)
        if column is None:
            overflow += [name] if evolve else []
        elif column.type.name == "dynamic" and not pa.types.is_binary(values.type):
            columns[name] = pa.array([_cbor(v) for v in values.to_pylist()], pa.binary())
        elif column.type.name == "string" and not pa.types.is_string(values.type):
            columns[name] = _as_text(values)
        else:
            columns[name] = values
    if overflow:
        columns["props"] = _props(batch, overflow)
    return pa.RecordBatch.from_pydict(columns)


def _as_text(values: pa.Array) -> pa.Array:
    try:
        return pc.cast(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # nested: compact JSON text
        return pa.array(
            [None if v is None else json.dumps(v, default=str) for v in values.to_pylist()],
            pa.string(),
        )


def _props(batch: pa.RecordBatch, names: list[str]) -> pa.Array:
    """Each row's ``names`` fields as one CBOR map (per row: only for fields past the cap)."""
    rows = pa.Table.from_batches([batch]).select(names).to_pylist()
    return pa.array([_cbor({k: v for k, v in row.items() if v is not None}) for row in rows])


def _cbor(value: object) -> bytes | None:
    return None if value is None else cbor2.dumps(value, datetime_as_timestamp=True, timezone=UTC)
