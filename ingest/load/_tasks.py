"""What a Spark task does with its splits: read, coerce, write extents, report them.

Runs in Spark's Python workers through ``mapInArrow``: everything it needs travels in a
picklable ``TaskPlan``; the extents it writes are reported back (pickled) for the driver to
commit in one snapshot. Nothing here touches the catalog.
"""

from __future__ import annotations

import gzip
import json
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import IngestError
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.config import StoreConfig
from kyma.ingest.coerce import coerce_ndjson
from kyma.ingest.load._inputs import InputFile
from kyma.ingest.load._origin import Origin
from kyma.ingest.load._splits import Split, whole_lines
from kyma.ingest.tabular import csv_columns, parquet_columns
from kyma.ingest.write_path import column_writes, conform, sum_writes

OUTPUT_DDL = "split long, rows long, bytes long, extent binary, unknown_keys string, writes binary"
OUTPUT = pa.schema(
    [
        ("split", pa.int64()),
        ("rows", pa.int64()),
        ("bytes", pa.int64()),
        ("extent", pa.binary()),  # a pickled ExtentWriteResult, or null for an empty split
        ("unknown_keys", pa.string()),  # JSON list: NDJSON fields the table lacks
        ("writes", pa.binary()),  # pickled [ColumnWrite]: for the column statistics
    ]
)


@dataclass(frozen=True)
class TaskPlan:
    origin: Origin
    files: tuple[InputFile, ...]
    splits: tuple[Split, ...]
    info: TableInfo
    props_fields: tuple[str, ...]
    evolve: bool
    store: StoreConfig  # kyma's object store, where extents go
    block_rows: int
    ingest_time_ns: int
    extent_format: str = "parquet"  # KYMA_EXTENT_FORMAT


def split_runner(plan: TaskPlan, progress: Any) -> Callable[[Iterator[pa.RecordBatch]], Iterator]:
    """The ``mapInArrow`` function: split numbers in, one row per split out.

    ``progress`` is a Spark accumulator of (splits, rows, bytes) done.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        store = plan.store.open()
        fmt = segment_format(plan.extent_format, plan.block_rows)
        for batch in batches:
            for number in batch.column("split").to_pylist():
                split = plan.splits[number]
                table, unknown = _read(plan, split)
                extent, writes = None, []
                if table.num_rows:
                    writer = fmt.start_extent(store, plan.info.schema, plan.info.path_prefix)
                    with writer:
                        for piece in table.to_batches():
                            conformed = conform(piece, plan.info, plan.ingest_time_ns)
                            writes += column_writes(plan.info, conformed, None)
                            writer.append(conformed)
                        extent = writer.finish()
                size = split.end - split.start if plan.files[split.file].format != "parquet" else 0
                progress.add((1, table.num_rows, size))
                yield pa.record_batch(
                    [
                        pa.array([number], pa.int64()),
                        pa.array([table.num_rows], pa.int64()),
                        pa.array([size], pa.int64()),
                        pa.array([None if extent is None else pickle.dumps(extent)], pa.binary()),
                        pa.array([json.dumps(sorted(unknown))], pa.string()),
                        pa.array([pickle.dumps(sum_writes(writes))], pa.binary()),
                    ],
                    schema=OUTPUT,
                )

    return run


def unpack(raw: bytes) -> Any:
    """An ExtentWriteResult or a list of ColumnWrite, as a task reported it."""
    return pickle.loads(raw)  # noqa: S301 - our own tasks' output


def _read(plan: TaskPlan, split: Split) -> tuple[pa.Table, set[str]]:
    file = plan.files[split.file]
    try:
        if file.format == "ndjson":
            return _ndjson(plan, file, split)
        with plan.origin.local_copy(file) as path:
            if file.format == "csv":
                reader = pacsv.open_csv(
                    str(path),
                    convert_options=pacsv.ConvertOptions(
                        column_types=_all_text(path), strings_can_be_null=False
                    ),
                )
                batches, line = [], 2
                for batch in reader:
                    batches.append(csv_columns(batch, plan.info, line, plan.evolve))
                    line += batch.num_rows
                return pa.Table.from_batches(batches) if batches else pa.table({}), set()
            group = pq.ParquetFile(path).read_row_group(split.start)
            batches = [parquet_columns(b, plan.info, plan.evolve) for b in group.to_batches()]
            return pa.Table.from_batches(batches) if batches else pa.table({}), set()
    except IngestError as e:
        where = file.location if split.start == 0 else f"{file.location} (from byte {split.start})"
        raise IngestError(f"{where}: {e}", e.line, e.field) from None


def _ndjson(plan: TaskPlan, file: InputFile, split: Split) -> tuple[pa.Table, set[str]]:
    if file.compressed:
        body = gzip.decompress(plan.origin.read(file, 0, file.size))
    else:
        read = lambda offset, length: plan.origin.read(file, offset, length)  # noqa: E731
        body = whole_lines(read, file.size, split.start, split.end)
    if not body.strip():
        return pa.table({}), set()
    coerced = coerce_ndjson(
        body,
        plan.info.columns,
        props_fields=plan.props_fields,
        ingest_time_ns=plan.ingest_time_ns,
    )
    return pa.Table.from_batches([coerced.batch]), set(coerced.unknown_keys)


def _all_text(path: Any) -> dict[str, pa.DataType]:
    import csv
    import io

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as raw, io.TextIOWrapper(raw, "utf-8", newline="") as text:
        return {name: pa.string() for name in next(csv.reader(text), [])}
