"""One file-drop source's scan loop: every new or changed file ingested once, or marked failed.

Each poll lists the folder or bucket prefix. A file is taken when the catalog has no record
of it at its current size and modification time (and, in a local folder, when it was left
alone for a poll interval: unchanged since the previous scan, or modified that long ago; a
writer may still be appending). Its rows commit as one snapshot together with the
idempotency key ``filedrop:<sha256 of the file>`` and the file's record, so a re-scan, a
restart or a second copy of the same bytes ingests nothing twice, and a one-byte change is a
new file. A file that fails is recorded with its error and left alone until it changes; the
others go on. NDJSON takes the write path's NDJSON entry (``_ndjson.py``): a file, or a pack
of small ones, as one body, and a file over ``chunk_bytes`` in chunks written on a shared
pool and committed as one snapshot. A file of ``spark_min_bytes`` or more goes to a Spark
bulk load (same key, same record) when the process can run one. Up to ``parallel_files``
files of a scan are read and committed at once, each its own snapshot -- except small ones:
files under ``group_bytes`` are packed together, up to that many bytes, and each pack
commits as one snapshot holding every file's key and record, so a folder of many small
files pays one commit per pack instead of one per file. A pack that fails is taken again
file by file, so the bad file alone is marked failed. A scan that took files is followed by
another at once (more may have come meanwhile); an idle one waits ``poll_ms``.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from kyma.engine.catalog import Catalog, Payload
from kyma.engine.errors import (
    IdempotencyKeyReusedError,
    IngestError,
    NotFoundError,
    RetryableError,
    SourceUnreachableError,
    TerminalError,
)
from kyma.engine.storage import ObjectInfo, ObjectStore
from kyma.engine.storage.local import LocalStore
from kyma.ingest.filedrop._ndjson import (
    Chunked,
    count_rows,
    file_digest,
    ingest_chunked,
    read_small,
)
from kyma.ingest.filedrop._readers import read_batches, read_pack
from kyma.ingest.filedrop._spec import FileDropSpec
from kyma.ingest.filedrop.files import FileStore, SourceFile, all_ingested
from kyma.ingest.filedrop.files import ingested as file_ingested
from kyma.ingest.ledger import lookup as ledger_lookup
from kyma.ingest.ledger import record as ledger_record
from kyma.ingest.load import LoadIdentity, LoadRequest
from kyma.ingest.source import SourceWorker
from kyma.ingest.write_path import IngestAck, WritePath

log = logging.getLogger("kyma.filedrop")
T = TypeVar("T")
IGNORED_SUFFIXES = (".tmp", ".partial", ".crdownload")

#: Runs a Spark load of one file: (request, identity, rows-done callback) -> ack.
BulkLoad = Callable[[LoadRequest, LoadIdentity, Callable[[int], None]], IngestAck]
DOWNLOAD_BYTES = 16 << 20
PACK_EXTENT_BYTES = 64 << 20  # a pack's rows are written as extents of about this size


class FileDropWorker(SourceWorker):
    """Scans ``spec``'s path into its table until ``stop`` is set."""

    lag_unit = "files"  # due at the last scan and not ingested yet

    def __init__(
        self,
        spec: FileDropSpec,
        catalog: Catalog,
        files: FileStore,
        write_path: WritePath,
        store: ObjectStore,
        bulk_load: BulkLoad | None = None,
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        self.files = files
        self.write_path = write_path
        self.store = store
        self.bulk_load = bulk_load
        # last_error, and degraded: why the last scan could not run; None once one did
        self.last_scan: float | None = None
        self.files_ingested = 0  # by this worker, since it started
        self._previous: dict[str, tuple[int, object]] = {}  # a listing, and when it was
        self._previous_at = float("-inf")
        self._lock = threading.Lock()
        self._chunks: Executor = ThreadPoolExecutor(1)  # replaced by each scan's

    def run(self, stop: threading.Event) -> None:
        prepare_table(self.spec, self.catalog)
        while not stop.is_set():
            due = 0
            try:
                if isinstance(self.store, LocalStore) and not self.store.root.is_dir():
                    raise SourceUnreachableError(f"the folder {str(self.store.root)!r} is gone")
                due = self.scan(stop)
                self.degraded = None
            except RetryableError as e:  # the store or catalog is away: try on the next poll
                self.degraded = self.last_error = str(e)
                log.warning("source %r: scan failed, retrying: %s", self.spec.name, e)
            if not due:  # after a scan that took files, look again at once: more may be there
                stop.wait(self.spec.poll_ms / 1000)

    def scan(self, stop: threading.Event | None = None) -> int:
        """Take every file that is due, ``parallel_files`` units at a time; how many were due
        (each is now ingested, a replay, or failed)."""
        due = self._due()
        self.metrics.lag = len(due)
        spark_from = self.spec.spark_min_bytes if self.bulk_load is not None else None
        units = packs(due, self.spec.group_bytes, spark_from)

        def one(unit: list[ObjectInfo]) -> int:
            if stop is not None and stop.is_set():
                return 0  # not started: the next run takes it
            return self._ingest(unit[0]) if len(unit) == 1 else self._ingest_pack(unit)

        workers = min(self.spec.parallel_files, len(units))
        name = f"drop-{self.spec.name}"
        # a large file's chunks, of every file in flight: at most parallel_files at once
        with ThreadPoolExecutor(self.spec.parallel_files, f"{name}-chunk") as self._chunks:
            if workers <= 1:
                ingested = sum(one(unit) for unit in units)
            else:  # Arrow's parsers and the extent writes let go of the GIL
                with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
                    ingested = sum(pool.map(one, units))
        self.last_scan = time.time()
        log.debug("source %r: %d of %d due files ingested", name, ingested, len(due))
        return len(due)

    def _due(self) -> list[ObjectInfo]:
        """The files not yet ingested (or changed since) that no writer is still writing.

        In a local folder a file is settled when it looked the same on a listing a poll
        interval old or more, or was last modified that long ago (so a new scan takes it at
        once). A scan right after another compares with an older listing, not with that one."""
        done = {f.key: f for f in self.files.files(self.spec.name)}
        seen: dict[str, tuple[int, object]] = {}
        due = []
        local = isinstance(self.store, LocalStore)
        listed_at = time.monotonic()
        old_enough = listed_at - self._previous_at >= self.spec.poll_ms / 1000
        previous = self._previous if old_enough else {}
        settled_before = datetime.now(UTC) - timedelta(milliseconds=self.spec.poll_ms)
        for obj in sorted(self.store.list(), key=lambda o: o.key):
            name = obj.key.rsplit("/", 1)[-1]
            if name.startswith(".") or name.endswith(IGNORED_SUFFIXES):
                continue
            seen[obj.key] = (obj.size, obj.modified)
            record = done.get(obj.key)
            if record is not None and (record.size, record.modified) == (obj.size, obj.modified):
                continue
            settled = previous.get(obj.key) == seen[obj.key] or obj.modified <= settled_before
            if local and not settled:
                continue  # maybe still being written: look again on the next poll
            due.append(obj)
        if old_enough:
            self._previous, self._previous_at = seen, listed_at
        return due

    def _ingest(self, obj: ObjectInfo) -> int:
        try:
            with _local_copy(self.store, obj) as path:
                return self._ingest_file(obj, path)
        finally:
            self._done(1)

    def _done(self, files: int) -> None:
        with self._lock:
            self.metrics.lag = max(0, (self.metrics.lag or files) - files)

    def _ingest_pack(self, objs: list[ObjectInfo]) -> int:
        """Small files as one snapshot; on a terminal error, each again on its own."""
        try:
            with contextlib.ExitStack() as stack:
                paths = [stack.enter_context(_local_copy(self.store, obj)) for obj in objs]
                if self.spec.format == "ndjson":
                    ingested = self._ingest_ndjson_pack(objs, paths)
                else:
                    ingested = self._ingest_files(objs, paths)
        except TerminalError as e:
            name = self.spec.name
            log.info("source %r: a pack of %d files failed (%s); file by file", name, len(objs), e)
            return sum(self._ingest(obj) for obj in objs)
        self._done(len(objs))
        return ingested

    def _ingest_ndjson_pack(self, objs: list[ObjectInfo], paths: list[Path]) -> int:
        """NDJSON files joined into one body for ``ingest_ndjson``: one snapshot holding each
        new file's idempotency key and record; files whose bytes came before are replays."""
        limit = max(self.spec.group_bytes, self.spec.chunk_bytes)
        read, total = [], 0
        for obj, path in zip(objs, paths, strict=True):
            small = read_small(path, limit - total)  # a .gz may hold much: never past limit
            if small.body is None:
                raise IngestError(f"{obj.key}: the pack holds over {limit} bytes; file by file")
            read.append((obj, small.digest, small.body))
            total += len(small.body)
        fresh, replays = self._fresh(read)
        body = b"".join(body for _, body in fresh.values())
        name, table = self.spec.name, self.spec.table
        records, payloads = [], []
        for digest, (obj, file_body) in fresh.items():
            one = IngestAck(table, count_rows(file_body), None)  # rows known before the commit
            records.append((obj.key, obj.size, obj.modified, digest, one.rows))
            payloads.append(ledger_record(f"filedrop:{digest}", table, digest, _acked(one)))
        payloads.append(all_ingested(name, records))
        ack = None
        if fresh:
            rows = sum(r[4] for r in records)
            ack = self._ingest_body(body, rows, None, "", payload=_chained(payloads))
        return self._pack_done(len(fresh), ack, replays)

    def _ingest_files(self, objs: list[ObjectInfo], paths: list[Path]) -> int:
        """CSV or Parquet files as one snapshot, with each new one's idempotency key and
        record; the others are recorded as replays."""
        digests = [(obj, file_digest(path), path) for obj, path in zip(objs, paths, strict=True)]
        fresh, replays = self._fresh(digests)
        rows = dict.fromkeys(fresh, 0)

        def batches():  # type: ignore[no-untyped-def]
            """The files' batches, those of one schema as one (one extent, not one a file)."""
            held: list[pa.RecordBatch] = []
            paths = {digest: path for digest, (_, path) in fresh.items()}
            for batch, counts in read_pack(paths, self.spec, self.catalog):
                for digest, count in counts.items():
                    rows[digest] += count  # type: ignore[index]
                widened = held and batch.schema != held[0].schema
                if widened or sum(b.nbytes for b in held) >= PACK_EXTENT_BYTES:
                    yield pa.concat_batches(held)
                    held = []
                held.append(batch)
            if held:
                yield pa.concat_batches(held)

        def acked(digest: str):  # type: ignore[no-untyped-def]
            return lambda snapshot: IngestAck(self.spec.table, rows[digest], snapshot).to_json()

        def counted(digest: str):  # type: ignore[no-untyped-def]
            return lambda: rows[digest]

        name, table = self.spec.name, self.spec.table
        payloads = [
            each
            for digest, (obj, _) in fresh.items()
            for each in (
                file_ingested(name, obj.key, obj.size, obj.modified, digest, counted(digest)),
                ledger_record(f"filedrop:{digest}", table, digest, acked(digest)),
            )
        ]
        ack = None
        if fresh:
            ack = self.write_path.ingest_batches(
                self.spec.table,
                batches(),
                source=f"filedrop:{self.spec.name}",
                payload=_chained(payloads),
            )
        return self._pack_done(len(fresh), ack, replays)

    def _pack_done(
        self,
        fresh: int,
        ack: IngestAck | None,
        replays: list[tuple[ObjectInfo, str, int | None]],
    ) -> int:
        """Count a pack's committed files (``ack``: its snapshot, None if every file was a
        replay) and record the replays, pointing at their first snapshot; ``fresh`` back."""
        if ack is not None:
            self._committed(fresh, ack.rows)
            log.info(
                "source %r: %d files in one snapshot: %d rows", self.spec.name, fresh, ack.rows
            )
        snapshot = ack.snapshot_id if ack is not None else None
        for obj, digest, first_snapshot in replays:
            self._record(obj, digest, "ingested", rows=0, snapshot_id=first_snapshot or snapshot)
        return fresh

    def _ingest_file(self, obj: ObjectInfo, path: Path) -> int:
        large = self.spec.spark_min_bytes is not None and obj.size >= self.spec.spark_min_bytes
        spark = large and self.bulk_load is not None
        small = None
        if self.spec.format == "ndjson" and not spark and obj.size <= self.spec.chunk_bytes:
            small = read_small(path, self.spec.chunk_bytes)  # one read: digest and body
        digest = small.digest if small is not None else file_digest(path)
        first = self._first_ack(digest)
        if first is not None:  # the same bytes came before, under this name or another
            self._record(obj, digest, "ingested", rows=0, snapshot_id=first.snapshot_id)
            return 0
        key = f"filedrop:{digest}"
        source = f"filedrop:{self.spec.name}"
        rows = Chunked()

        def record(count: Callable[[], int]) -> Payload:
            return file_ingested(self.spec.name, obj.key, obj.size, obj.modified, digest, count)

        try:
            if spark and self.bulk_load is not None:
                request = LoadRequest(
                    self.spec.table, str(path), self.spec.format, self.spec.schema_evolve
                )
                identity = LoadIdentity(key, digest, f"{source}:spark", record(lambda: rows.rows))
                ack = self.bulk_load(request, identity, partial(setattr, rows, "rows"))
            elif small is not None and small.body is not None:  # one body: REST's path
                body_rows = count_rows(small.body)  # before the commit, not in it
                ack = self._ingest_body(
                    small.body, body_rows, key, digest, payload=record(partial(int, body_rows))
                )
            elif self.spec.format == "ndjson":
                ack = ingest_chunked(
                    self.write_path,
                    self.spec,
                    path,
                    self._chunks,
                    key=key,
                    digest=digest,
                    payload=record(lambda: rows.rows),
                    done=rows,
                    ingest_time_ns=time.time_ns(),
                )
            else:
                ack = self.write_path.ingest_batches(
                    self.spec.table,
                    _counted(read_batches(path, self.spec, self.catalog), rows),
                    idempotency_key=key,
                    content_hash=digest,
                    source=source,
                    payload=record(lambda: rows.rows),
                )
        except IdempotencyKeyReusedError as e:
            first = self._first_ack(digest)
            if first is None:  # the same bytes went into another table: this file fails
                return self._failed(obj, digest, e)
            # the same bytes, keyed with another body hash (a .gz read whole or in chunks)
            self._record(obj, digest, "ingested", rows=0, snapshot_id=first.snapshot_id)
            return 0
        except TerminalError as e:
            return self._failed(obj, digest, e)
        if ack.replayed:  # ingested by someone else since the look-up above
            self._record(obj, digest, "ingested", rows=0, snapshot_id=ack.snapshot_id)
            return 0
        self._committed(1, ack.rows)
        log.info("source %r: %s: %d rows", self.spec.name, obj.key, ack.rows)
        return 1

    def _ingest_body(
        self, body: bytes, rows: int, key: str | None, digest: str, payload: Payload
    ) -> IngestAck:
        """An NDJSON body through ``ingest_ndjson``; one of no rows (an empty file) commits
        an empty snapshot, so the file is recorded once, as before."""
        source = f"filedrop:{self.spec.name}"
        if not rows:  # the write path refuses an empty body
            return self.write_path.ingest_batches(
                self.spec.table,
                [],
                idempotency_key=key,
                content_hash=digest,
                source=source,
                payload=payload,
            )
        return self.write_path.ingest_ndjson(
            self.spec.table,
            body,
            idempotency_key=key,
            schema_evolve=self.spec.schema_evolve,
            source=source,
            payload=payload,
        )

    def _failed(self, obj: ObjectInfo, digest: str, error: Exception) -> int:
        self._record(obj, digest, "failed", error=str(error))
        self.last_error = f"{obj.key}: {error}"
        log.warning("source %r: %s failed: %s", self.spec.name, obj.key, error)
        return 0

    def _fresh(
        self, files: list[tuple[ObjectInfo, str, T]]
    ) -> tuple[dict[str, tuple[ObjectInfo, T]], list[tuple[ObjectInfo, str, int | None]]]:
        """A pack's (file, digest, data): by digest, the files whose bytes were never
        ingested (the first of each); the others as (file, digest, snapshot of their first
        ingest, None when that is this pack's)."""
        firsts = self._first_acks([digest for _, digest, _ in files], in_pack=True)
        fresh: dict[str, tuple[ObjectInfo, T]] = {}
        replays: list[tuple[ObjectInfo, str, int | None]] = []
        for obj, digest, data in files:
            first = firsts[digest]
            if first is not None or digest in fresh:  # the same bytes, before or in this pack
                replays.append((obj, digest, first.snapshot_id if first else None))
            else:
                fresh[digest] = (obj, data)
        return fresh, replays

    def _first_ack(self, digest: str) -> IngestAck | None:
        return self._first_acks([digest])[digest]

    def _first_acks(self, digests: list[str], in_pack: bool = False) -> dict[str, IngestAck | None]:
        """How each file's bytes were first ingested into this table, if they were (under
        any file's name), looked up on one connection. Bytes that went into another table
        are not a replay: their key is taken, so ingesting them fails, naming that table (a
        pack goes file by file)."""
        with self.write_path.ledger.db.connection() as conn:
            entries = {d: ledger_lookup(conn, f"filedrop:{d}") for d in dict.fromkeys(digests)}
        firsts: dict[str, IngestAck | None] = {}
        for digest, entry in entries.items():
            if entry is not None and entry.table_name != self.spec.table and in_pack:
                raise IngestError(f"bytes of table {entry.table_name!r} in a pack; file by file")
            if entry is None or entry.table_name != self.spec.table:
                firsts[digest] = None
            else:  # only the snapshot is read: Spark loads' acks have their own shape
                firsts[digest] = IngestAck(
                    self.spec.table, 0, entry.ack.get("snapshot_id"), replayed=True
                )
        return firsts

    def _committed(self, files: int, rows: int) -> None:
        with self._lock:
            self.files_ingested += files
        self.metrics.committed(rows)

    def _record(self, obj: ObjectInfo, digest: str, state: str, **fields: object) -> None:
        file = SourceFile(
            key=obj.key,
            size=obj.size,
            modified=obj.modified,
            sha256=digest,
            state=state,
            rows=fields.get("rows"),  # type: ignore[arg-type]
            snapshot_id=fields.get("snapshot_id"),  # type: ignore[arg-type]
            error=fields.get("error"),  # type: ignore[arg-type]
        )
        self.files.record(self.spec.name, file)


def packs(
    due: list[ObjectInfo], group_bytes: int, spark_from: int | None = None
) -> list[list[ObjectInfo]]:
    """The files in units of work: each file under ``group_bytes`` packed with its
    neighbours (in name order) up to ``group_bytes`` together; larger ones alone, and so are
    files of ``spark_from`` bytes or more (None: none), which go to a Spark load."""
    units: list[list[ObjectInfo]] = []
    pack: list[ObjectInfo] = []
    for obj in due:
        if obj.size >= group_bytes or (spark_from is not None and obj.size >= spark_from):
            units.append([obj])
            continue
        if pack and sum(o.size for o in pack) + obj.size > group_bytes:
            units.append(pack)
            pack = []
        pack.append(obj)
    return [*units, pack] if pack else units


def _counted(batches: Iterator[pa.RecordBatch], done: Chunked) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        done.rows += batch.num_rows
        yield batch


def _acked(ack: IngestAck) -> Callable[[int], dict[str, object]]:
    return lambda snapshot_id: {**ack.to_json(), "snapshot_id": snapshot_id}


def _chained(payloads: list[Payload]) -> Payload:
    def run(cur, snapshot_id: int) -> None:  # type: ignore[no-untyped-def]
        for payload in payloads:
            payload(cur, snapshot_id)

    return run


def prepare_table(spec: FileDropSpec, catalog: Catalog) -> None:
    """Create the source's table (default columns only; files widen it) if it is missing."""
    try:
        catalog.get_table(spec.table)
    except NotFoundError:
        catalog.create_table(spec.table, [], if_not_exists=True)


@contextlib.contextmanager
def _local_copy(store: ObjectStore, obj: ObjectInfo) -> Iterator[Path]:
    """The object as a local file: itself in a folder, else a fresh download, deleted after.

    Not the store's cache: that keys immutable extents by name, and a dropped file may be
    overwritten under the same name.
    """
    if isinstance(store, LocalStore):
        yield store.local_path(obj.key)
        return
    suffix = "".join(Path(obj.key).suffixes[-2:])  # keep .ndjson.gz: readers look at it
    with tempfile.NamedTemporaryFile(prefix="kyma-drop-", suffix=suffix) as copy:
        for offset in range(0, obj.size, DOWNLOAD_BYTES):
            copy.write(store.get_range(obj.key, offset, min(DOWNLOAD_BYTES, obj.size - offset)))
        copy.flush()
        yield Path(copy.name)
