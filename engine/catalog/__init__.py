"""The catalog seam (``base.Catalog``) and its Postgres implementation, over the shared
catalog database that the stores of other layers use too."""

from kyma.engine.catalog._column_stats import ColumnWrite
from kyma.engine.catalog._column_stats import record as column_stats_record
from kyma.engine.catalog._commit import CommitEvent
from kyma.engine.catalog._database import ENGINE_MIGRATIONS, CatalogDatabase, Store
from kyma.engine.catalog._known_tables import counting_reads
from kyma.engine.catalog._migrate import Migrations
from kyma.engine.catalog._model import (
    CommitResult,
    DeletionVector,
    ExtentRef,
    ManifestEntry,
    SnapshotInfo,
    TableInfo,
    ViewInfo,
)
from kyma.engine.catalog._options import parse_duration, retention_seconds, schema_evolution
from kyma.engine.catalog._views import advance as advance_matview
from kyma.engine.catalog.base import Catalog, Payload, Transaction
from kyma.engine.catalog.postgres import PostgresCatalog, check_identifier

__all__ = [
    "ENGINE_MIGRATIONS",
    "Catalog",
    "CatalogDatabase",
    "ColumnWrite",
    "CommitEvent",
    "CommitResult",
    "DeletionVector",
    "ExtentRef",
    "ManifestEntry",
    "Migrations",
    "Payload",
    "PostgresCatalog",
    "SnapshotInfo",
    "Store",
    "TableInfo",
    "Transaction",
    "ViewInfo",
    "advance_matview",
    "check_identifier",
    "counting_reads",
    "column_stats_record",
    "parse_duration",
    "retention_seconds",
    "schema_evolution",
]
