"""A local cache of whole remote objects, so reads can memory-map them.

Objects are immutable, so a cached copy never goes stale. The cache evicts the least
recently used files once it holds more than ``max_bytes``.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path


class ObjectCache:
    def __init__(self, root: Path, max_bytes: int = 8 << 30) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def path_for(self, namespace: str, key: str, fetch: Callable[[Path], None]) -> Path:
        """The cached file for ``key``; on a miss ``fetch(tmp_path)`` downloads it first."""
        digest = hashlib.sha256(f"{namespace}\0{key}".encode()).hexdigest()
        path = self.root / digest[:2] / f"{digest}{Path(key).suffix}"
        if path.exists():
            os.utime(path)
            return path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{uuid.uuid4().hex}.part")
        try:
            fetch(tmp)
            os.chmod(tmp, 0o600)  # cached extents are tables' rows: the owner's alone
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        self._evict(keep=path)
        return path

    def _evict(self, keep: Path) -> None:
        with self._lock:
            files = [p for p in self.root.glob("*/*") if not p.name.startswith(".")]
            stats = {p: p.stat() for p in files}
            total = sum(s.st_size for s in stats.values())
            for p in sorted(files, key=lambda p: stats[p].st_atime):
                if total <= self.max_bytes:
                    break
                if p != keep:
                    p.unlink(missing_ok=True)
                    total -= stats[p].st_size
