"""Object storage: the ObjectStore seam, with a local-folder and an S3 implementation.

Objects are immutable once written: a key is written once, read many times, deleted by GC.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    modified: datetime


class ObjectStore(abc.ABC):
    """Where extents live. Keys are ``/``-separated relative paths."""

    url: str

    @abc.abstractmethod
    def put_file(self, key: str, source: Path) -> None:
        """Store the file at ``source`` under ``key``, durably; ``source`` is consumed."""

    def put_unsynced(self, key: str, source: Path) -> None:
        """``put_file``, except that the object may not survive a crash until ``sync`` names
        it: a writer of many objects syncs them once, before anything refers to them (the
        local store fsyncs each folder once then, not once per object)."""
        self.put_file(key, source)

    def sync(self, keys: Iterable[str]) -> None:  # noqa: B027 - optional hook
        """Make the objects ``put_unsynced`` stored under ``keys`` durable (here: they are)."""

    @abc.abstractmethod
    def put_bytes(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, durably."""

    @abc.abstractmethod
    def size(self, key: str) -> int:
        """Byte size of an object; NotFoundError if absent."""

    @abc.abstractmethod
    def get_range(self, key: str, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset``; NotFoundError if absent."""

    @abc.abstractmethod
    def local_path(self, key: str) -> Path:
        """A local file holding the whole object (remote stores go through the cache)."""

    @abc.abstractmethod
    def delete(self, key: str) -> None:
        """Remove an object; absent objects are ignored."""

    @abc.abstractmethod
    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Every object whose key starts with ``prefix``."""

    def open_input(self, key: str) -> pa.NativeFile:
        """A seekable file over the object that fetches only the byte ranges read."""
        from kyma.engine.storage._range import RangeFile

        return pa.PythonFile(RangeFile(self, key), mode="r")

    def scratch_dir(self) -> Path | None:
        """A folder where writers may stage files so ``put_file`` is a rename."""
        return None


def open_object_store(
    url: str,
    *,
    cache_dir: Path,
    s3_endpoint_url: str | None = None,
    s3_region: str = "us-east-1",
    s3_access_key_id: str | None = None,
    s3_secret_access_key: str | None = None,
    create: bool = True,
) -> ObjectStore:
    """An ObjectStore for ``file:///path``, a plain path, or ``s3://bucket/prefix``.

    ``create=False``: a local folder must already exist (ConfigError) and is left as it is."""
    from kyma.engine.errors import ConfigError

    if url.startswith("s3://"):
        from kyma.engine.storage.s3 import S3Store

        return S3Store(
            url,
            cache_dir=cache_dir,
            endpoint_url=s3_endpoint_url,
            region=s3_region,
            access_key_id=s3_access_key_id,
            secret_access_key=s3_secret_access_key,
        )
    if "://" in url and not url.startswith("file://"):
        raise ConfigError(f"object store {url!r}: expected s3://bucket/prefix or file:///path")
    from kyma.engine.storage.local import LocalStore

    return LocalStore(Path(url.removeprefix("file://")), create=create)
