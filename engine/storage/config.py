"""An object store described by plain values: picklable, opened (once per process) where used.

Spark tasks and data sources carry one to the executors instead of a live client.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from kyma.engine.storage import ObjectStore, open_object_store


@dataclass(frozen=True)
class StoreConfig:
    """An object store's URL and S3 settings: picklable, opened where it is used. The one
    place S3 settings travel: the server's store, file-drop paths and Spark tasks all open
    theirs from one."""

    url: str
    cache_dir: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)  # never in a log line
    create: bool = True  # a missing local folder is made (False: it must exist, e.g. a drop)

    def open(self) -> ObjectStore:
        """The store, one client per process (Spark tasks open it once per worker)."""
        return _opened(self)

    def connect(self) -> ObjectStore:
        """A client of the store of its own (a server's store, a file-drop path)."""
        return open_object_store(
            self.url,
            cache_dir=Path(self.cache_dir),
            s3_endpoint_url=self.endpoint_url,
            s3_region=self.region,
            s3_access_key_id=self.access_key_id,
            s3_secret_access_key=self.secret_access_key,
            create=self.create,
        )


@functools.cache
def _opened(config: StoreConfig) -> ObjectStore:  # one client per process and store
    return config.connect()
