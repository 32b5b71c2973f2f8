"""Postgres CDC sync: an exported-snapshot initial load, then the logical replication slot's
pgoutput changes, into kyma tables that carry the system columns ``_kyma_pk``, ``_kyma_op``,
``_kyma_lsn`` and ``_kyma_event_at``. Exactly once: each table's cursor commits with its
extents; the slot moves only after."""

from kyma.connectors.base import SyncDisabled
from kyma.connectors.postgres.cdc._slot import release
from kyma.connectors.postgres.cdc._spark_snapshot import SparkTarget
from kyma.connectors.postgres.cdc._tables import (
    NO_PRIMARY_KEY,
    PK_CHANGED,
    RESNAPSHOT_REASONS,
    SLOT_INVALIDATED,
    SLOT_MISSING,
    slot_name,
)
from kyma.connectors.postgres.cdc._worker import CdcWorker, prepare

__all__ = [
    "NO_PRIMARY_KEY",
    "PK_CHANGED",
    "RESNAPSHOT_REASONS",
    "SLOT_INVALIDATED",
    "SLOT_MISSING",
    "SparkTarget",
    "CdcWorker",
    "SyncDisabled",
    "prepare",
    "release",
    "slot_name",
]
