"""A dropped file → Arrow batches of its table's columns, one bounded chunk at a time.

NDJSON goes through the write path's coercion chunk by chunk (so it behaves as REST does);
CSV is read as text and each column converted to its table type with Arrow casts; Parquet
batches keep their types and are cast by the write path. Unknown fields follow the ingest
seed's evolution rule (a new string column, or ``props`` past the cap, or dropped when the
source does not evolve). ``.gz`` files are decompressed as they are read. A pack of small
files is read by ``read_pack``: NDJSON ones are joined and coerced together (one coercion
instead of one per file), each file's rows counted by its non-blank lines.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import re
from collections.abc import Hashable, Iterator, Mapping
from pathlib import Path
from typing import IO, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kyma.engine.catalog import Catalog, TableInfo
from kyma.engine.errors import IngestError
from kyma.engine.types import Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.filedrop._spec import FileDropSpec
from kyma.ingest.tabular import csv_columns, parquet_columns
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


def read_pack(
    paths: Mapping[Hashable, Path], spec: FileDropSpec, write_path: WritePath, ingest_time_ns: int
) -> Iterator[tuple[pa.RecordBatch, dict[Hashable, int]]]:
    """Several files' rows as batches, each with how many rows of which file it holds."""
    if spec.format != "ndjson":
        for key, path in paths.items():
            for batch in read_batches(path, spec, write_path, ingest_time_ns):
                yield batch, {key: batch.num_rows}
        return
    bodies: dict[Hashable, bytes] = {}
    for key, path in paths.items():
        with _open(path) as stream:  # a small .gz may still hold much: read a bounded part
            body = stream.read(CHUNK_BYTES + 1).removeprefix(codecs.BOM_UTF8)
        if len(body) > CHUNK_BYTES:
            raise IngestError(f"{path.name} holds over {CHUNK_BYTES} bytes; file by file")
        if body and not body.endswith(b"\n"):
            body += b"\n"
        bodies[key] = body
        if sum(map(len, bodies.values())) >= CHUNK_BYTES:
            yield _coerced_together(bodies, spec, write_path, ingest_time_ns)
            bodies = {}
    if bodies:
        yield _coerced_together(bodies, spec, write_path, ingest_time_ns)


def _coerced_together(
    bodies: dict[Hashable, bytes], spec: FileDropSpec, write_path: WritePath, ingest_time_ns: int
) -> tuple[pa.RecordBatch, dict[Hashable, int]]:
    """One coercion of the joined bodies; IngestError (from the first failing file, when
    they are taken one by one) if any of them is bad."""
    _, coerced, _ = write_path.coerce(
        spec.table,
        b"".join(bodies.values()),
        schema_evolve=spec.schema_evolve,
        ingest_time_ns=ingest_time_ns,
    )
    rows = {key: _object_lines(body) for key, body in bodies.items()}
    if sum(rows.values()) != coerced.rows:  # cannot tell whose rows are whose
        raise IngestError(f"a pack of {len(bodies)} files: rows do not add up; file by file")
    return coerced.batch, rows


def _object_lines(body: bytes) -> int:
    """The non-blank lines of an NDJSON body (the rows coercion makes of them)."""
    if not body:
        return 0
    lines = pc.split_pattern(pa.array([body], pa.large_binary()), b"\n").flatten()
    try:
        text = lines.cast(pa.large_string())
    except pa.ArrowInvalid as e:  # coercion took it: never, but then file by file
        raise IngestError(f"a pack's file is not UTF-8 ({e}); file by file") from None
    return pc.sum(pc.greater(pc.binary_length(pc.utf8_trim(text, " \t\r")), 0)).as_py() or 0


def _open(path: Path) -> IO[bytes]:
    return cast(IO[bytes], gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb"))


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
            yield csv_columns(batch, info, first_line, spec.schema_evolve)
            first_line += batch.num_rows


def _parquet(path: Path, spec: FileDropSpec, catalog: Catalog) -> Iterator[pa.RecordBatch]:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=PARQUET_ROWS):
        info = _fit_columns(batch.schema.names, spec, catalog)
        yield parquet_columns(batch, info, spec.schema_evolve)


def _fit_columns(names: list[str], spec: FileDropSpec, catalog: Catalog) -> TableInfo:
    """The table, widened by the new string columns the evolution rule grants ``names``."""
    info = catalog.get_table(spec.table)
    plan = plan_evolution(names, info.columns, evolve=spec.schema_evolve)
    for name in plan.new_columns:
        catalog.add_column(spec.table, Column(name, KymaType("string")), if_not_exists=True)
    return catalog.get_table(spec.table) if plan.new_columns else info
