"""An object store described by plain values: picklable, opened (once per process) where used.

Spark tasks and data sources carry one to the executors instead of a live client.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from kyma.engine.storage import ObjectStore, open_object_store


@dataclass(frozen=True)
class StoreConfig:
    """An object store's URL and S3 settings: picklable, opened where it is used."""

    url: str
    cache_dir: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: str | None = None

    def open(self) -> ObjectStore:
        return _opened(self)


@functools.cache
def _opened(config: StoreConfig) -> ObjectStore:  # one client per process and store
    return open_object_store(
        config.url,
        cache_dir=Path(config.cache_dir),
        s3_endpoint_url=config.endpoint_url,
        s3_region=config.region,
        s3_access_key_id=config.access_key_id,
        s3_secret_access_key=config.secret_access_key,
    )
