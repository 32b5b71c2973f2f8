"""An ObjectStore in a local folder: writes are fsynced renames, reads are plain files.

A rename is durable once its folder is fsynced. Concurrent writers into one folder share
those fsyncs (``_FolderSync``), and ``put_unsynced`` leaves the folder's to ``sync``, which a
writer of many objects calls once: one fsync per object, not two.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterable, Iterator
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
        self._folders: dict[Path, _FolderSync] = {}
        self._folders_lock = threading.Lock()
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
        self.put_unsynced(key, source)
        self.sync([key])

    def put_unsynced(self, key: str, source: Path) -> None:
        target = self._path(key)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(source, 0o600)  # the store's objects are its owner's alone
        _fsync(source)
        os.replace(source, target)

    def sync(self, keys: Iterable[str]) -> None:
        for folder in {self._path(key).parent for key in keys}:
            with self._folders_lock:
                synced = self._folders.setdefault(folder, _FolderSync(folder))
            synced.wait()

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


class _FolderSync:
    """fsyncs of one folder shared by the threads that need one: a caller waits for an
    fsync that starts after it asked; one running when it asked does not count, the next
    serves every caller that asked meanwhile."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._changed = threading.Condition()
        self._asked = 0
        self._done = 0
        self._running = False

    def wait(self) -> None:
        with self._changed:
            self._asked += 1
            mine = self._asked
            while self._done < mine:
                if self._running:
                    self._changed.wait()
                    continue
                self._running, serves = True, self._asked
                self._changed.release()
                try:
                    _fsync(self.folder)
                finally:
                    self._changed.acquire()
                    self._running = False
                    self._changed.notify_all()
                self._done = serves
