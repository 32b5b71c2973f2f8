"""Where a load's files are, in a form Spark tasks can carry: local, or an S3 bucket."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kyma.engine.storage.config import StoreConfig
from kyma.ingest.load._inputs import InputFile

DOWNLOAD_BYTES = 16 << 20


@dataclass(frozen=True)
class Origin:
    """The local filesystem (``bucket`` None), or a bucket whose keys the files are."""

    bucket: StoreConfig | None = None

    def read(self, file: InputFile, offset: int, length: int) -> bytes:
        if self.bucket is not None:
            return self.bucket.open().get_range(file.location, offset, length)
        with open(file.location, "rb") as f:
            f.seek(offset)
            return f.read(length)

    @contextlib.contextmanager
    def local_copy(self, file: InputFile) -> Iterator[Path]:
        """The file as a local path: itself, or a download deleted afterwards."""
        if self.bucket is None:
            yield Path(file.location)
            return
        with tempfile.NamedTemporaryFile(prefix="kyma-load-", suffix=file.location[-8:]) as f:
            for offset in range(0, file.size, DOWNLOAD_BYTES):
                f.write(self.read(file, offset, min(DOWNLOAD_BYTES, file.size - offset)))
            f.flush()
            yield Path(f.name)
