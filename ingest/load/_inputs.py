"""The files a load reads: a local path or glob, or an S3 prefix or glob, with their hashes."""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kyma.engine.errors import ConfigError, NotFoundError
from kyma.engine.storage import ObjectStore

FORMATS = {
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".json": "ndjson",
    ".csv": "csv",
    ".parquet": "parquet",
}
READ_BYTES = 8 << 20


@dataclass(frozen=True)
class InputFile:
    location: str  # a local path, or the key in ``StoreConfig``'s bucket
    size: int
    format: str
    compressed: bool  # .gz: read whole, in one task


def format_of(name: str, forced: str | None) -> str:
    """The file's format: ``forced``, or from its extension (``.gz`` looked through)."""
    if forced is not None:
        if forced not in set(FORMATS.values()):
            raise ConfigError(f"format: expected ndjson, csv or parquet, got {forced!r}")
        return forced
    stem = name.removesuffix(".gz")
    for suffix, fmt in FORMATS.items():
        if stem.endswith(suffix):
            return fmt
    raise ConfigError(f"{name}: unknown format; name it with --format (ndjson, csv, parquet)")


def local_files(pattern: str, forced: str | None) -> list[InputFile]:
    """Files matching a path, a folder (everything in it) or a glob, sorted by name."""
    if os.path.isdir(pattern):
        pattern = os.path.join(pattern, "*")
    paths = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
    if not paths:
        raise NotFoundError(f"no files match {pattern!r}")
    return [
        InputFile(p, os.path.getsize(p), format_of(p, forced), p.endswith(".gz")) for p in paths
    ]


def store_files(store: ObjectStore, pattern: str, forced: str | None) -> list[InputFile]:
    """Objects under a prefix, or matching a glob after the last fixed folder."""
    wild = next((i for i, c in enumerate(pattern) if c in "*?["), None)
    prefix = pattern if wild is None else pattern[: pattern.rfind("/", 0, wild) + 1]
    found = [
        o
        for o in store.list(prefix)
        if (wild is None or fnmatch.fnmatchcase(o.key, pattern)) and not o.key.endswith("/")
    ]
    if not found:
        raise NotFoundError(f"no objects match {pattern!r}")
    return [
        InputFile(o.key, o.size, format_of(o.key, forced), o.key.endswith(".gz"))
        for o in sorted(found, key=lambda o: o.key)
    ]


def blocks(file: InputFile, read) -> Iterator[tuple[int, bytes]]:  # type: ignore[no-untyped-def]
    """The file's bytes in READ_BYTES blocks, each with its offset."""
    for offset in range(0, file.size, READ_BYTES):
        yield offset, read(file, offset, min(READ_BYTES, file.size - offset))


def content_hash(
    files: list[InputFile],
    read,  # type: ignore[no-untyped-def]
    observe: Callable[[int, int, bytes], None] = lambda index, offset, data: None,
) -> str:
    """SHA-256 over the files' own SHA-256s, in name order: the load's identity.

    ``observe(file index, offset, block)`` sees every block read (progress, line counts).
    """
    outer = hashlib.sha256()
    for index, file in enumerate(files):
        inner = hashlib.sha256()
        for offset, data in blocks(file, read):
            inner.update(data)
            observe(index, offset, data)
        outer.update(inner.digest())
    return outer.hexdigest()
