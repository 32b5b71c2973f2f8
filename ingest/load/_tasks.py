"""What a Spark task does with its splits: read, coerce, write extents, report them.

Runs in Spark's Python workers through ``mapInArrow``: everything it needs travels in a
picklable ``TaskPlan``; the extents it writes are reported back (pickled) for the driver to
commit in one snapshot. Nothing here touches the catalog.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import pickle
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import IngestError, LimitExceededError
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.config import StoreConfig
from kyma.ingest.coerce import Lines, check_shape, coerce_ndjson
from kyma.ingest.load._inputs import InputFile
from kyma.ingest.load._origin import Origin
from kyma.ingest.load._progress import SplitReporter
from kyma.ingest.load._splits import Split, pieces, whole_lines
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


PIECE_BYTES = 8 << 20  # a task coerces and writes its split this much at a time


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
    progress_to: tuple[str, int] | None = None  # the driver's ProgressChannel
    max_keys_per_row: int = 10_000  # the REST path's row shape limits (0: none)
    max_nesting_depth: int = 100


def split_runner(plan: TaskPlan, progress: Any) -> Callable[[Iterator[pa.RecordBatch]], Iterator]:
    """The ``mapInArrow`` function: split numbers in, one row per split out.

    ``progress`` is a Spark accumulator of (splits, rows, bytes) done; while a split runs,
    its rows and bytes so far also go to ``plan.progress_to`` after every piece.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        store = plan.store.open()
        fmt = segment_format(plan.extent_format, plan.block_rows)
        reporter = SplitReporter(plan.progress_to)
        try:
            for batch in batches:
                for number in batch.column("split").to_pylist():
                    yield _run_split(plan, number, store, fmt, reporter, progress)
        finally:
            reporter.close()

    return run


def _run_split(plan: TaskPlan, number: int, store: Any, fmt: Any, reporter: Any, progress: Any):  # type: ignore[no-untyped-def]
    """Read, coerce and write one split piece by piece; its output row."""
    split = plan.splits[number]
    writer, writes, unknown, rows, size, extent = None, [], set(), 0, 0, None
    with contextlib.ExitStack() as stack:  # a failing split aborts its extent
        for table, keys, done in _read(plan, split):
            unknown |= keys
            if table.num_rows and writer is None:
                writer = stack.enter_context(
                    fmt.start_extent(store, plan.info.schema, plan.info.path_prefix)
                )
            for piece in table.to_batches() if table.num_rows else []:
                conformed = conform(piece, plan.info, plan.ingest_time_ns)
                writes += column_writes(plan.info, conformed, None)
                assert writer is not None  # started above: the table has rows
                writer.append(conformed)
            rows, size = rows + table.num_rows, done
            reporter.send(number, rows, size)
        if writer is not None:
            extent = writer.finish()
    progress.add((1, rows, size))
    return pa.record_batch(
        [
            pa.array([number], pa.int64()),
            pa.array([rows], pa.int64()),
            pa.array([size], pa.int64()),
            pa.array([None if extent is None else pickle.dumps(extent)], pa.binary()),
            pa.array([json.dumps(sorted(unknown))], pa.string()),
            pa.array([pickle.dumps(sum_writes(writes))], pa.binary()),
        ],
        schema=OUTPUT,
    )


def unpack(raw: bytes) -> Any:
    """An ExtentWriteResult or a list of ColumnWrite, as a task reported it."""
    return pickle.loads(raw)  # noqa: S301 - our own tasks' output


Piece = tuple[pa.Table, set[str], int]  # rows, NDJSON fields the table lacks, bytes done


def _read(plan: TaskPlan, split: Split) -> Iterator[Piece]:
    """The split's rows a piece at a time; an IngestError names the file and its line."""
    file = plan.files[split.file]
    if file.format == "ndjson":
        yield from _ndjson(plan, file, split)  # names the line itself
        return
    try:
        with plan.origin.local_copy(file) as path:
            if file.format == "csv":
                yield from _csv(plan, file, path)
                return
            parquet = pq.ParquetFile(path)
            group = parquet.read_row_group(split.start)
            batches = [parquet_columns(b, plan.info, plan.evolve) for b in group.to_batches()]
            groups = parquet.num_row_groups  # bytes: the file's share of this group
            share = file.size * (split.start + 1) // groups - file.size * split.start // groups
            yield pa.Table.from_batches(batches) if batches else pa.table({}), set(), share
    except IngestError as e:
        raise e.shifted(0, file.location) from None


def _csv(plan: TaskPlan, file: InputFile, path: Any) -> Iterator[Piece]:
    with (
        open(path, "rb") as raw,
        gzip.open(raw) if file.compressed else contextlib.nullcontext(raw) as source,
    ):
        reader = pacsv.open_csv(
            source,
            convert_options=pacsv.ConvertOptions(
                column_types=_all_text(path), strings_can_be_null=False
            ),
        )
        line = 2
        for batch in reader:
            table = pa.Table.from_batches([csv_columns(batch, plan.info, line, plan.evolve)])
            line += batch.num_rows
            yield table, set(), min(raw.tell(), file.size)
    yield pa.table({}), set(), file.size


def _ndjson(plan: TaskPlan, file: InputFile, split: Split) -> Iterator[Piece]:
    if file.compressed:
        body = gzip.decompress(plan.origin.read(file, 0, file.size))
    else:
        read = lambda offset, length: plan.origin.read(file, offset, length)  # noqa: E731
        body = whole_lines(read, file.size, split.start, split.end)
    size, done = split.end - split.start, 0
    for piece, lines in pieces(body, PIECE_BYTES):
        done += len(piece)
        if not piece.strip():
            yield pa.table({}), set(), size * done // len(body)
            continue
        try:
            coerced = coerce_ndjson(
                piece,
                plan.info.columns,
                props_fields=plan.props_fields,
                ingest_time_ns=plan.ingest_time_ns,
                lines=_check_shape(plan, piece),
            )
        except IngestError as e:
            raise e.shifted(split.first_line - 1 + lines, file.location) from None
        yield (
            pa.Table.from_batches([coerced.batch]),
            set(coerced.unknown_keys),
            size * done // len(body),
        )
    yield pa.table({}), set(), size


_LINE = re.compile(r"line (\d+) ")


def _check_shape(plan: TaskPlan, piece: bytes) -> Lines:
    """The REST path's row shape limits; a row past them is bad input of its line."""
    try:
        return check_shape(piece, plan.max_keys_per_row, plan.max_nesting_depth)
    except LimitExceededError as e:  # keys per row: "line N has K keys, over ..."
        found = _LINE.match(str(e))
        raise IngestError(str(e), int(found.group(1)) if found else None) from None


def _all_text(path: Any) -> dict[str, pa.DataType]:
    import csv
    import io

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as raw, io.TextIOWrapper(raw, "utf-8", newline="") as text:
        return {name: pa.string() for name in next(csv.reader(text), [])}
