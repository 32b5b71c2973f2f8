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
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq

from kyma.engine.catalog import Payload, TableInfo
from kyma.engine.errors import IngestError, KymaError, NotFoundError
from kyma.engine.storage.config import StoreConfig
from kyma.engine.types import Column, KymaType
from kyma.ingest.evolution import plan_evolution
from kyma.ingest.load._inputs import InputFile, content_hash, local_files, store_files
from kyma.ingest.load._origin import Origin
from kyma.ingest.load._splits import plan_splits
from kyma.ingest.load._tasks import OUTPUT_DDL, TaskPlan, split_runner, unpack
from kyma.ingest.write_path import IngestAck, WritePath

PROGRESS_SECONDS = 1.0


@dataclass
class LoadProgress:
    """What a running load has done; ``eta_seconds`` from the bytes rate so far."""

    phase: str = "listing"  # listing, hashing, reading, writing, committing, done, failed
    files_total: int = 0
    files_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    rows_done: int = 0
    started: float = field(default_factory=time.monotonic)
    eta_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "files_total": self.files_total,
            "files_done": self.files_done,
            "bytes_total": self.bytes_total,
            "bytes_done": self.bytes_done,
            "rows_done": self.rows_done,
            "elapsed_seconds": round(time.monotonic() - self.started, 1),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
        }


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
    block_rows: int = 8192,
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
    progress.phase, progress.files_total = "hashing", len(files)
    progress.bytes_total = sum(f.size for f in files)
    on_progress(progress)
    if identity is None:
        digest = content_hash(files, origin.read)
        key = "load:" + hashlib.sha256(f"{request.table}\n{digest}".encode()).hexdigest()[:48]
        identity = LoadIdentity(key, digest, "load")
    key, digest = identity.key, identity.content_hash
    catalog = write_path.catalog
    earlier = catalog.ledger_lookup(key)
    if earlier is not None:  # loaded before: nothing to do
        progress.phase = "done"
        on_progress(progress)
        return IngestAck(**{**earlier.ack, "replayed": True})
    info = _table(write_path, request, files, origin)
    splits = plan_splits(files, lambda f: _row_groups(origin, f))
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
    )
    progress.phase = "reading"
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
        progress.phase, progress.bytes_done, progress.rows_done = "writing", 0, 0
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
    numbers = spark.range(len(plan.splits), numPartitions=max(1, len(plan.splits)))
    frame = numbers.withColumnRenamed("id", "split").mapInArrow(
        split_runner(plan, done), OUTPUT_DDL
    )
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(PROGRESS_SECONDS):
            _update(progress, plan, done.value)
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
    _update(progress, plan, done.value)
    on_progress(progress)
    return rows


def _update(progress: LoadProgress, plan: TaskPlan, totals: tuple[int, int, int]) -> None:
    splits, rows, size = totals
    progress.rows_done, progress.bytes_done = rows, size
    progress.files_done = round(progress.files_total * splits / max(1, len(plan.splits)))
    elapsed = time.monotonic() - progress.started
    if 0 < splits < len(plan.splits):
        progress.eta_seconds = elapsed * (len(plan.splits) - splits) / splits


def _task_error(error: Exception) -> KymaError:
    """IngestError with the task's message when a task rejected the input."""
    text = str(error)
    marker = "kyma.engine.errors.IngestError: "
    if marker in text:
        return IngestError(text.split(marker, 1)[1].splitlines()[0])
    return KymaError(f"the load's Spark job failed: {text.splitlines()[0] if text else error!r}")
