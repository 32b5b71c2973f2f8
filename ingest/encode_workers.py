"""Ingest worker processes: NDJSON coercion and extent writes off the server's GIL.

A ``ProcessPoolExecutor`` on a ``forkserver`` context (never a plain fork of the threaded
server), started on first use. The forkserver preloads the modules a job needs, so a
worker starts in milliseconds. Each worker ignores SIGINT (the server decides when they
stop) and exits by itself once the server is gone, even after a ``kill -9`` of it (the
forkserver outlives the server while a worker holds its pipe, so workers watch the server's
pid in /proc: gone, a zombie, or reused counts as dead).
A worker that dies mid-job breaks the pool: that job (and any running beside it) fails
with IngestWorkerError, nothing of it is committed, and the next job gets a new pool.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import shared_memory
from pathlib import Path
from typing import Any, Generic, TypeVar

import pyarrow as pa

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import IngestWorkerError
from kyma.engine.storage.config import StoreConfig
from kyma.ingest.encode import Encoded, EncodeJob, FormatSpec, encode_batch, encode_ndjson

PRELOAD = ["kyma.ingest.encode"]
WATCH_SECONDS = 0.2
SHARE_MIN_BYTES = 1 << 18
SHM_DIR = Path("/dev/shm")
T = TypeVar("T")


class EncodeWorkers:
    """A lazily started pool of ``size`` worker processes writing to ``store``."""

    def __init__(self, size: int, store: StoreConfig, fmt: FormatSpec) -> None:
        self.size = size
        self.store = store
        self.format = fmt
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    def encode(self, job: EncodeJob) -> Encoded | None:
        """``encode_ndjson(job)`` in a worker; its errors are raised here as they were there.

        A large body travels through shared memory: one copy on each side, where a pipe
        costs dozens of writes and reads (and process switches) for a few MB."""
        table, size = job.info.name, len(job.body)
        if size < SHARE_MIN_BYTES or not SHM_DIR.is_dir():
            return self.submit(table, encode_ndjson, job, self.store, self.format).result()
        shared = shared_memory.SharedMemory(create=True, size=size)  # the server's tracker
        try:  # unlinks it if the server is killed before the finally
            buffer = shared.buf
            assert buffer is not None  # open until close()
            buffer[:size] = job.body
            light = dataclasses.replace(job, body=b"")
            args = (light, shared.name, size, self.store, self.format)
            return self.submit(table, _encode_shared, *args).result()
        finally:
            shared.close()
            shared.unlink()

    def encode_batch(
        self, batch: pa.RecordBatch, info: TableInfo, ingest_time_ns: int
    ) -> Pending[Encoded]:
        """``encode_batch(batch)`` started in a worker (the batch travels as Arrow IPC)."""
        args = (batch, info, ingest_time_ns, self.store, self.format)
        return self.submit(info.name, encode_batch, *args)

    def submit(self, table: str, fn: Callable[..., T], *args: Any) -> Pending[T]:
        """``fn(*args)`` started in a worker, for a request writing ``table``."""
        executor = self._started()
        try:
            return Pending(self, executor, table, executor.submit(fn, *args))
        except BrokenProcessPool as e:
            raise self._died(executor, table) from e

    def warm(self) -> None:
        """Start the forkserver and every worker now, in the background (``kyma serve``
        does, so that its first ingest, e.g. a Kafka source resuming, does not wait)."""

        def start() -> None:
            try:
                executor = self._started()
                for _ in range(self.size):
                    executor.submit(os.getpid)
            except (IngestWorkerError, BrokenProcessPool, RuntimeError):
                pass  # closed meanwhile; the first job starts the pool (or says why not)

        threading.Thread(target=start, name="kyma-ingest-workers", daemon=True).start()

    def pids(self) -> list[int]:
        """The worker processes running now (none before the first job)."""
        executor = self._executor
        processes = getattr(executor, "_processes", None) or {}
        return [p.pid for p in list(processes.values()) if p.pid is not None]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def _started(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise IngestWorkerError("the ingest workers are shut down: the server is stopping")
            if self._executor is None:
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(PRELOAD)
                self._executor = ProcessPoolExecutor(
                    self.size,
                    mp_context=context,
                    initializer=_worker_started,
                    initargs=(os.getpid(),),
                )
            return self._executor

    def _died(self, broken: ProcessPoolExecutor, table: str) -> IngestWorkerError:
        """The error of a job whose worker died; the next job gets a new pool."""
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)
        return IngestWorkerError(
            f"an ingest worker process died while writing table {table!r}"
            " (killed, or out of memory); nothing was committed, try again"
        )


@dataclass(frozen=True)
class Pending(Generic[T]):
    """A job running in a worker."""

    workers: EncodeWorkers
    executor: ProcessPoolExecutor
    table: str
    future: Future[T]

    def result(self) -> T:
        """The job's answer, or the error it raised there (IngestWorkerError if it died)."""
        try:
            return self.future.result()
        except BrokenProcessPool as e:
            raise self.workers._died(self.executor, self.table) from e


def _encode_shared(
    job: EncodeJob, name: str, size: int, store: StoreConfig, fmt: FormatSpec
) -> Encoded | None:
    """In a worker: ``encode_ndjson`` of a body the server left in shared memory (read as a
    file, so that this process's resource tracker never claims the segment)."""
    with (SHM_DIR / name).open("rb") as segment:
        body = segment.read(size)
    return encode_ndjson(dataclasses.replace(job, body=body), store, fmt)


def _worker_started(server_pid: int) -> None:
    """In each worker: leave SIGINT to the server, and exit once the server is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = _start_time(server_pid)
    threading.Thread(target=_watch, args=(server_pid, started), daemon=True).start()


def _watch(server_pid: int, started: str | None) -> None:
    """Exit once the server died: its pid gone, a zombie, or another process's."""
    while started is not None and _start_time(server_pid) == started:
        time.sleep(WATCH_SECONDS)
    os._exit(0)


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (None when it is gone or a zombie), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]
