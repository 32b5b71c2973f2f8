"""A dropped CSV or Parquet file → Arrow batches of its table's columns, a bounded chunk at a time.

CSV is read as text and each column converted to its table type with Arrow casts; Parquet
batches keep their types and are cast by the write path. Unknown fields follow the ingest
seed's evolution rule (a new string column, or ``props`` past the cap, or dropped when the
source does not evolve). ``.gz`` files are decompressed as they are read. NDJSON goes
through the write path's own NDJSON entry instead (``_ndjson.py``).
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Hashable, Iterator, Mapping
from pathlib import Path
from typing import IO, cast

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kyma.engine.catalog import Catalog, TableInfo
from kyma.engine.types import Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.filedrop._spec import FileDropSpec
from kyma.ingest.tabular import csv_columns, parquet_columns

CHUNK_BYTES = 32 << 20
PARQUET_ROWS = 128 * 1024


def read_batches(path: Path, spec: FileDropSpec, catalog: Catalog) -> Iterator[pa.RecordBatch]:
    """A CSV or Parquet file's rows as batches the write path takes; IngestError names
    line and field."""
    if spec.format == "csv":
        yield from _csv(path, spec, catalog)
    else:
        yield from _parquet(path, spec, catalog)


def read_pack(
    paths: Mapping[Hashable, Path], spec: FileDropSpec, catalog: Catalog
) -> Iterator[tuple[pa.RecordBatch, dict[Hashable, int]]]:
    """Several files' rows as batches, each with how many rows of which file it holds."""
    for key, path in paths.items():
        for batch in read_batches(path, spec, catalog):
            yield batch, {key: batch.num_rows}


def _open(path: Path) -> IO[bytes]:
    return cast(IO[bytes], gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb"))


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
