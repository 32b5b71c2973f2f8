"""A dropped file → Arrow batches of its table's columns, one bounded chunk at a time.

NDJSON goes through the write path's coercion chunk by chunk (so it behaves as REST does);
CSV is read as text and each column converted to its table type with Arrow casts; Parquet
batches keep their types and are cast by the write path. Unknown fields follow the ingest
seed's evolution rule (a new string column, or ``props`` past the cap, or dropped when the
source does not evolve). ``.gz`` files are decompressed as they are read.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import IO

import cbor2
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kyma.engine.catalog import Catalog, TableInfo
from kyma.engine.errors import IngestError
from kyma.engine.types import Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.filedrop._spec import FileDropSpec
from kyma.ingest.write_path import WritePath

CHUNK_BYTES = 32 << 20
PARQUET_ROWS = 128 * 1024
_ZONE = r"([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$"


def read_batches(
    path: Path, spec: FileDropSpec, write_path: WritePath, ingest_time_ns: int
) -> Iterator[pa.RecordBatch]:
    """The file's rows as batches the write path takes; IngestError names line and field."""
    if spec.format == "ndjson":
        with _open(path) as stream:
            yield from _ndjson(stream, spec, write_path, ingest_time_ns)
    elif spec.format == "csv":
        yield from _csv(path, spec, write_path.catalog)
    else:
        yield from _parquet(path, spec, write_path.catalog)


def _open(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")


def _ndjson(
    stream: IO[bytes], spec: FileDropSpec, write_path: WritePath, ingest_time_ns: int
) -> Iterator[pa.RecordBatch]:
    lines_before = 0
    while chunk := stream.read(CHUNK_BYTES):
        if not chunk.endswith(b"\n"):
            chunk += stream.readline()  # whole lines only
        try:
            _, coerced, _ = write_path.coerce(
                spec.table, chunk, schema_evolve=spec.schema_evolve, ingest_time_ns=ingest_time_ns
            )
        except IngestError as e:
            raise _shifted(e, lines_before) from None
        lines_before += chunk.count(b"\n")
        yield coerced.batch


def _shifted(error: IngestError, lines_before: int) -> IngestError:
    """``error`` with its line counted from the start of the file, not of the chunk."""
    if error.line is None or not lines_before:
        return error
    line = error.line + lines_before
    return IngestError(re.sub(r"^line \d+", f"line {line}", str(error)), line, error.field)


def _csv(path: Path, spec: FileDropSpec, catalog: Catalog) -> Iterator[pa.RecordBatch]:
    with io.TextIOWrapper(_open(path), "utf-8", newline="") as text:
        header = next(csv.reader(text, delimiter=spec.csv_delimiter), [])
    reader = pacsv.open_csv(  # a path: Arrow reads it, decompressing .gz itself
        str(path),
        read_options=pacsv.ReadOptions(block_size=CHUNK_BYTES),
        parse_options=pacsv.ParseOptions(delimiter=spec.csv_delimiter),
        convert_options=pacsv.ConvertOptions(
            column_types={name: pa.string() for name in header}, strings_can_be_null=False
        ),
    )
    with reader:
        first_line = 2  # line 1 is the header
        for batch in reader:
            info = _fit_columns(batch.schema.names, spec, catalog)
            yield _typed_csv(batch, info, first_line, spec.schema_evolve)
            first_line += batch.num_rows


def _typed_csv(
    batch: pa.RecordBatch, info: TableInfo, first_line: int, evolve: bool
) -> pa.RecordBatch:
    """Text columns converted to the table's types; the rest to ``props`` or dropped."""
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


def _parquet(path: Path, spec: FileDropSpec, catalog: Catalog) -> Iterator[pa.RecordBatch]:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=PARQUET_ROWS):
        info = _fit_columns(batch.schema.names, spec, catalog)
        columns: dict[str, pa.Array] = {}
        overflow: list[str] = []
        for name, values in zip(batch.schema.names, batch.columns, strict=True):
            column = info.column(name)
            if column is None:
                overflow += [name] if spec.schema_evolve else []
            elif column.type.name == "dynamic" and not pa.types.is_binary(values.type):
                columns[name] = pa.array([_cbor(v) for v in values.to_pylist()], pa.binary())
            elif column.type.name == "string" and not pa.types.is_string(values.type):
                columns[name] = _as_text(values)
            else:
                columns[name] = values
        if overflow:
            columns["props"] = _props(batch, overflow)
        yield pa.RecordBatch.from_pydict(columns)


def _fit_columns(names: list[str], spec: FileDropSpec, catalog: Catalog) -> TableInfo:
    """The table, widened by the new string columns the evolution rule grants ``names``."""
    info = catalog.get_table(spec.table)
    plan = plan_evolution(names, info.columns, evolve=spec.schema_evolve)
    for name in plan.new_columns:
        catalog.add_column(spec.table, Column(name, KymaType("string")), if_not_exists=True)
    return catalog.get_table(spec.table) if plan.new_columns else info


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
