"""NDJSON files into the write path: whole through ``ingest_ndjson``, large ones in chunks.

A file (or a pack of small files, joined) whose body fits in ``chunk_bytes`` is handed to
``WritePath.ingest_ndjson`` as one body: coercion, extents and the commit are the write
path's own (REST's path), and the file's records ride in the commit's payload. A larger
file is split at line boundaries into chunks of about ``chunk_bytes``; each chunk is coerced
and written as extents on the caller's ``pool`` (a few at once, in file order), and every
chunk's extents commit as ONE snapshot with the file's idempotency key
(``WritePath.commit_extents``). A bad line names its line in the file, not in its chunk.
Kill tests stop the process after a chunk's extents are written with the crash point
``filedrop.chunk_written`` (``KYMA_CRASH_AT``, engine/crashpoints.py).
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import re
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.catalog import ColumnWrite, Payload
from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import IngestError
from kyma.engine.format import ExtentWriteResult
from kyma.ingest.filedrop._spec import FileDropSpec
from kyma.ingest.write_path import IngestAck, WritePath

_BLANK_START = (b" ", b"\t", b"\r", b"\n")
_LINE_BLANK_START = re.compile(rb"\n[ \t\r\n]")  # a fast scan (the regex's literal prefix)
CHUNKS_AHEAD = 2  # chunks of one file coerced or written at once (each holds its Arrow data)


@dataclass(frozen=True)
class SmallFile:
    """A file read whole: its SHA-256 and its NDJSON body (decompressed, without a BOM,
    ending in a newline); ``body`` is None when it holds more than the limit."""

    digest: str
    body: bytes | None


def read_small(path: Path, limit: int) -> SmallFile:
    """Read a file once: the digest of its bytes, and its body if that is ``limit`` or less."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if path.name.endswith(".gz"):
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            raw = stream.read(limit + 1)
    if len(raw) > limit:
        return SmallFile(digest, None)
    body = raw.removeprefix(codecs.BOM_UTF8)
    return SmallFile(digest, body + b"\n" if body and not body.endswith(b"\n") else body)


def count_rows(body: bytes) -> int:
    """The rows coercion makes of ``body`` (ending in a newline): its non-blank lines."""
    lines = body.count(b"\n")
    if body[:1] not in _BLANK_START and _LINE_BLANK_START.search(body) is None:
        return lines  # the common case: no line starts blank, so none is blank
    split = pc.split_pattern(pa.array([body], pa.large_binary()), b"\n").flatten()
    try:
        text = split.cast(pa.large_string())
    except pa.ArrowInvalid:  # coercion refuses it anyway, naming the line
        return lines
    return pc.sum(pc.greater(pc.binary_length(pc.utf8_trim(text, " \t\r")), 0)).as_py() or 0


@dataclass
class Chunked:
    """What the chunks of one file wrote so far."""

    written: list[ExtentWriteResult] = field(default_factory=list)
    writes: list[ColumnWrite] = field(default_factory=list)
    rows: int = 0


def ingest_chunked(
    write_path: WritePath,
    spec: FileDropSpec,
    path: Path,
    pool: Executor,
    *,
    key: str,
    digest: str,
    payload: Payload,
    done: Chunked,
    ingest_time_ns: int,
) -> IngestAck:
    """Coerce and write ``path``'s chunks on ``pool``, then commit them as one snapshot
    under ``key``. ``done`` holds the rows (for ``payload``) once the chunks are written."""
    pending: deque[Future[Chunked]] = deque()

    def collect(future: Future[Chunked]) -> None:
        part = future.result()
        done.written += part.written
        done.writes += part.writes
        done.rows += part.rows

    try:
        for lines_before, chunk in _chunks(path, spec.chunk_bytes):
            if len(pending) >= CHUNKS_AHEAD:
                collect(pending.popleft())
            pending.append(
                pool.submit(_write_chunk, write_path, spec, chunk, lines_before, ingest_time_ns)
            )
        while pending:
            collect(pending.popleft())
    except BaseException:
        for future in pending:  # the chunks after the failing one: drop or undo them
            if not future.cancel() and future.exception() is None:
                write_path.discard(future.result().written)
        write_path.discard(done.written)
        raise
    return write_path.commit_extents(
        spec.table,
        done.written,
        idempotency_key=key,
        content_hash=digest,
        source=f"filedrop:{spec.name}",
        payload=payload,
        writes=done.writes,
    )


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(4 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _chunks(path: Path, chunk_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(lines before it in the file, chunk) for each run of whole lines of ``chunk_bytes``
    or a little more; a .gz file is decompressed as it is read."""
    lines_before = 0
    with gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb") as stream:
        first = True
        while chunk := stream.read(chunk_bytes):
            if first:
                chunk, first = chunk.removeprefix(codecs.BOM_UTF8), False
            if not chunk.endswith(b"\n"):
                chunk += stream.readline()  # whole lines only
            yield lines_before, chunk
            lines_before += chunk.count(b"\n")


def _write_chunk(
    write_path: WritePath, spec: FileDropSpec, chunk: bytes, lines_before: int, now: int
) -> Chunked:
    """One chunk coerced (the table widened as its fields need) and written as extents."""
    try:  # in an ingest worker when the server is busy with another body
        encoded = write_path.write_ndjson(
            spec.table, chunk, schema_evolve=spec.schema_evolve, ingest_time_ns=now
        )
    except IngestError as e:
        if not count_rows(chunk):  # a run of blank lines: nothing to write
            return Chunked()
        raise _shifted(e, lines_before) from None
    crash_point("filedrop.chunk_written")
    return Chunked(encoded.written, encoded.writes, encoded.rows)


def _shifted(error: IngestError, lines_before: int) -> IngestError:
    """``error`` with its line counted from the start of the file, not of the chunk."""
    if error.line is None or not lines_before:
        return error
    line = error.line + lines_before
    return IngestError(re.sub(r"^line \d+", f"line {line}", str(error)), line, error.field)
