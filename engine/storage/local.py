"""An ObjectStore in a local folder: writes are fsynced renames, reads are plain files."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from kyma.engine.errors import ConfigError, NotFoundError
from kyma.engine.storage import ObjectInfo, ObjectStore

_STAGING = ".staging"


class LocalStore(ObjectStore):
    """``create=False`` opens a folder that must exist, to be read (a file-drop folder):
    nothing is created in or above it; ConfigError when it is missing."""

    def __init__(self, root: Path, *, create: bool = True) -> None:
        self.root = root.absolute()
        self.url = f"file://{self.root}"
        if not create:
            if not self.root.is_dir():
                raise ConfigError(f"the folder {str(self.root)!r} does not exist")
            return
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.root / _STAGING).mkdir(mode=0o700, exist_ok=True)

    def _path(self, key: str) -> Path:
        """The file of ``key``; keys are relative, with no empty, ``.`` or ``..`` segment."""
        if key.startswith("/") or any(part in ("", ".", "..") for part in key.split("/")):
            raise NotFoundError(f"object key {key!r} escapes the store")
        return self.root / key

    def scratch_dir(self) -> Path:
        return self.root / _STAGING

    def put_file(self, key: str, source: Path) -> None:
        target = self._path(key)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(source, 0o600)  # the store's objects are its owner's alone
        _fsync(source)
        os.replace(source, target)
        _fsync_dir(target.parent)

    def put_bytes(self, key: str, data: bytes) -> None:
        self._path(key)  # refuse a bad key before staging anything
        staged = self.scratch_dir() / f"{uuid.uuid4().hex}.part"
        staged.write_bytes(data)
        self.put_file(key, staged)

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            raise NotFoundError(f"object {key!r} not found in {self.url}") from None

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        try:
            with self._path(key).open("rb") as fh:
                fh.seek(offset)
                return fh.read(length)
        except FileNotFoundError:
            raise NotFoundError(f"object {key!r} not found in {self.url}") from None

    def local_path(self, key: str) -> Path:
        path = self._path(key)
        if not path.exists():
            raise NotFoundError(f"object {key!r} not found in {self.url}")
        return path

    def open_input(self, key: str) -> pa.NativeFile:
        return pa.memory_map(str(self.local_path(key)))

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != _STAGING]
            for name in filenames:
                path = Path(dirpath) / name
                key = path.relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    stat = path.stat()
                    modified = datetime.fromtimestamp(stat.st_mtime, UTC)
                    yield ObjectInfo(key, stat.st_size, modified)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    _fsync(path)
