"""A bulk load on Spark: plan on the driver, coerce and write in tasks, commit once.

1. The files are listed and hashed; their hashes make the idempotency key, so loading the
   same files again (into the same table) is a no-op.
2. The schema is decided on the driver before tasks write: CSV headers and Parquet schemas
   are read there; NDJSON fields are only known once read, so the tasks of a first pass
   report the fields the table lacks and, if evolution adds columns, a second pass writes
   again against the widened table (the first pass's extents are deleted).
3. Tasks (``mapInArrow``) write extents with the engine's writer; the driver commits them
   all in one snapshot with the key. A job that dies before that leaves no visible rows;
   orphan GC deletes what its tasks wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

from kyma.engine.catalog import Payload, TableInfo
from kyma.engine.errors import IngestError, KymaError, NotFoundError
from kyma.engine.storage.config import StoreConfig
from kyma.engine.types import Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.load._inputs import InputFile, blocks, content_hash, local_files, store_files
from kyma.ingest.load._origin import Origin
from kyma.ingest.load._progress import LoadProgress, ProgressChannel
from kyma.ingest.load._splits import LineCounter, plan_splits, text_starts
from kyma.ingest.load._tasks import OUTPUT_DDL, TaskPlan, split_runner, unpack
from kyma.ingest.write_path import IngestAck, WritePath

PROGRESS_SECONDS = 1.0


@dataclass(frozen=True)
class LoadIdentity:
    """What a load commits as: its idempotency key, content hash, source and extra payload."""

    key: str
    content_hash: str
    source: str
    payload: Payload | None = None


@dataclass(frozen=True)
class LoadRequest:
    table: str
    source: str  # a local path, folder or glob; or s3://bucket/prefix-or-glob
    format: str | None = None
    schema_evolve: bool = True


def run_load(
    spark: Any,
    write_path: WritePath,
    store: StoreConfig,
    request: LoadRequest,
    *,
    block_rows: int = 131_072,  # KYMA_BLOCK_ROWS
    extent_format: str = "parquet",
    source_bucket: Callable[[str], StoreConfig] | None = None,
    on_progress: Callable[[LoadProgress], None] = lambda _: None,
    identity: LoadIdentity | None = None,
) -> IngestAck:
    """Load ``request.source`` into ``request.table``; the ack of the one commit (or replay).

    ``source_bucket`` gives the store config of an ``s3://bucket`` the files are in;
    ``identity`` replaces the key made from the files' hashes (a file-drop source hands a
    large file over with its own key and file record).
    """
    progress = LoadProgress()
    origin, files = _discover(request, source_bucket)
    progress.files_total, progress.bytes_total = len(files), sum(f.size for f in files)
    progress.enter("hashing")
    on_progress(progress)
    lines = LineCounter(text_starts(files))
    hashed = identity is None
    if identity is None:
        digest = content_hash(files, origin.read, _observer(files, lines, progress, on_progress))
        key = "load:" + hashlib.sha256(f"{request.table}\n{digest}".encode()).hexdigest()[:48]
        identity = LoadIdentity(key, digest, "load")
    key, digest = identity.key, identity.content_hash
    catalog = write_path.catalog
    earlier = write_path.ledger.lookup(key)
    if earlier is not None:  # loaded before: nothing to do
        progress.phase = "done"
        on_progress(progress)
        return IngestAck(**{**earlier.ack, "replayed": True})
    if not hashed:  # the bytes were not read: count the lines of long files now
        for index in text_starts(files):
            for offset, data in blocks(files[index], origin.read):
                lines.observe(index, offset, data)
    info = _table(write_path, request, files, origin)
    splits = plan_splits(files, lambda f: _row_groups(origin, f), lines.first_lines)
    plan = TaskPlan(
        origin=origin,
        files=tuple(files),
        splits=tuple(splits),
        info=info,
        props_fields=(),
        evolve=request.schema_evolve,
        store=store,
        block_rows=block_rows,
        ingest_time_ns=time.time_ns(),
        extent_format=extent_format,
        max_keys_per_row=write_path.max_keys_per_row,
        max_nesting_depth=write_path.max_nesting_depth,
    )
    progress.enter("reading")
    results = _run(spark, plan, progress, on_progress)
    unknown = sorted({k for r in results for k in json.loads(r["unknown_keys"])})
    evolution = plan_evolution(unknown, info.columns, evolve=request.schema_evolve)
    if evolution.new_columns or evolution.props_fields:  # NDJSON brought new fields
        write_path.discard([unpack(r["extent"]) for r in results if r["extent"]])
        for name in evolution.new_columns:
            catalog.add_column(request.table, Column(name, KymaType("string")), if_not_exists=True)
        plan = dataclasses.replace(
            plan,
            info=catalog.get_table(request.table),
            props_fields=tuple(evolution.props_fields),
        )
        progress.enter("writing")
        results = _run(spark, plan, progress, on_progress)
    written = [unpack(r["extent"]) for r in results if r["extent"]]
    progress.phase = "committing"
    on_progress(progress)
    ack = write_path.commit_extents(
        request.table,
        written,
        idempotency_key=key,
        content_hash=digest,
        source=identity.source,
        payload=identity.payload,
        writes=[w for r in results for w in unpack(r["writes"])],
    )
    progress.phase, progress.eta_seconds = "done", 0.0
    on_progress(progress)
    return ack


def _discover(
    request: LoadRequest, source_bucket: Callable[[str], StoreConfig] | None
) -> tuple[Origin, list[InputFile]]:
    if not request.source.startswith("s3://"):
        return Origin(), local_files(request.source, request.format)
    bucket, _, pattern = request.source.removeprefix("s3://").partition("/")
    if source_bucket is None:
        raise KymaError("loading from S3 needs the server's S3 settings")
    origin = Origin(source_bucket(f"s3://{bucket}"))
    return origin, store_files(origin.bucket.open(), pattern, request.format)  # type: ignore[union-attr]


def _table(
    write_path: WritePath, request: LoadRequest, files: list[InputFile], origin: Origin
) -> TableInfo:
    """The table, created if missing and widened for CSV headers and Parquet schemas."""
    catalog = write_path.catalog
    try:
        catalog.get_table(request.table)
    except NotFoundError:
        catalog.create_table(request.table, [], if_not_exists=True)
    names: list[str] = []
    for file in files:
        if file.format == "parquet":
            with origin.local_copy(file) as path:
                names += pq.ParquetFile(path).schema_arrow.names
        elif file.format == "csv":
            with origin.local_copy(file) as path:
                from kyma.ingest.load._tasks import _all_text

                names += list(_all_text(path))
    info = catalog.get_table(request.table)
    plan = plan_evolution(list(dict.fromkeys(names)), info.columns, evolve=request.schema_evolve)
    for name in plan.new_columns:
        catalog.add_column(request.table, Column(name, KymaType("string")), if_not_exists=True)
    return catalog.get_table(request.table)


def _row_groups(origin: Origin, file: InputFile) -> int:
    with origin.local_copy(file) as path:
        return pq.ParquetFile(path).num_row_groups


def _observer(
    files: list[InputFile],
    lines: LineCounter,
    progress: LoadProgress,
    on_progress: Callable[[LoadProgress], None],
) -> Callable[[int, int, bytes], None]:
    """What sees each block hashed: the line counter, and the progress every second."""
    before = [sum(f.size for f in files[:i]) for i in range(len(files))]
    last = [time.monotonic()]

    def observe(index: int, offset: int, data: bytes) -> None:
        lines.observe(index, offset, data)
        progress.advance(0, before[index] + offset + len(data))
        if time.monotonic() - last[0] >= PROGRESS_SECONDS:
            last[0] = time.monotonic()
            on_progress(progress)

    return observe


def _run(
    spark: Any,
    plan: TaskPlan,
    progress: LoadProgress,
    on_progress: Callable[[LoadProgress], None],
) -> list[dict[str, Any]]:
    """Run every split as a Spark task; their result rows. Progress is reported meanwhile."""
    from pyspark.accumulators import AccumulatorParam

    class Totals(AccumulatorParam):
        def zero(self, value):  # type: ignore[no-untyped-def]
            return (0, 0, 0)

        def addInPlace(self, a, b):  # type: ignore[no-untyped-def]  # noqa: N802 - Spark's name
            return tuple(x + y for x, y in zip(a, b, strict=True))

    done = spark.sparkContext.accumulator((0, 0, 0), Totals())
    channel = ProgressChannel(spark.sparkContext.getConf().get("spark.driver.host", "127.0.0.1"))
    plan = dataclasses.replace(plan, progress_to=channel.address)
    numbers = spark.range(len(plan.splits), numPartitions=max(1, len(plan.splits)))
    frame = numbers.withColumnRenamed("id", "split").mapInArrow(
        split_runner(plan, done), OUTPUT_DDL
    )
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_SECONDS):
            _update(progress, plan, done.value, channel.totals())
            on_progress(progress)

    reporter = threading.Thread(target=report, daemon=True, name="load-progress")
    reporter.start()
    try:
        rows = [row.asDict() for row in frame.collect()]
    except Exception as e:  # the task's own error, not Spark's wrapping of it
        raise _task_error(e) from None
    finally:
        stop.set()
        reporter.join()
        channel.close()
    _update(progress, plan, done.value, (0, 0))
    on_progress(progress)
    return rows


def _update(
    progress: LoadProgress,
    plan: TaskPlan,
    finished: tuple[int, int, int],
    running: tuple[int, int],
) -> None:
    """Counters from the finished splits' accumulator and the running splits' datagrams."""
    splits, rows, size = finished
    progress.advance(max(rows, running[0]), max(size, running[1]))
    progress.files_done = round(progress.files_total * splits / max(1, len(plan.splits)))


def _task_error(error: Exception) -> KymaError:
    """One line of kyma's words for a failed Spark job: the task's own error when it has one.

    IngestError when a task rejected the input; else the last Python exception line in
    Spark's text (a task's traceback travels inside the Java one), else its first line.
    """
    text = str(error)
    marker = "kyma.engine.errors.IngestError: "
    if marker in text:
        return IngestError(text.split(marker, 1)[1].splitlines()[0])
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line]
    cause = (
        next((line for line in lines[starts[-1] + 1 :] if line and not line[0].isspace()), None)
        if starts
        else None
    )
    said = cause or (lines[0] if lines else repr(error))
    return KymaError(f"the load's Spark job failed: {said}")
