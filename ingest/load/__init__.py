"""Bulk loads on Spark: files in, one snapshot out (``kyma load``, ``POST /v1/jobs/load``)."""

from kyma.engine.storage.config import StoreConfig
from kyma.ingest.load._job import LoadIdentity, LoadRequest, run_load
from kyma.ingest.load._progress import LoadProgress
from kyma.ingest.load._spark import spark_session

__all__ = [
    "LoadIdentity",
    "LoadProgress",
    "LoadRequest",
    "StoreConfig",
    "run_load",
    "spark_session",
]
