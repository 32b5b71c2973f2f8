"""Postgres CDC sync: an exported-snapshot initial load, then the logical replication slot's
pgoutput changes, into kyma tables that carry the system columns ``_kyma_pk``, ``_kyma_op``,
``_kyma_lsn`` and ``_kyma_event_at``. Exactly once: each table's cursor commits with its
extents; the slot moves only after.

Names load lazily: a Spark task that reads a snapshot chunk imports ``_spark_snapshot``
(and this package) in every Python worker, and must not pay for the streaming loop's
imports (DataFusion among them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "SyncDisabled": "kyma.connectors.base",
    "release": "kyma.connectors.postgres.cdc._slot",
    "SparkTarget": "kyma.connectors.postgres.cdc._spark_snapshot",
    "NO_PRIMARY_KEY": "kyma.connectors.postgres.cdc._tables",
    "PK_CHANGED": "kyma.connectors.postgres.cdc._tables",
    "RESNAPSHOT_REASONS": "kyma.connectors.postgres.cdc._tables",
    "SLOT_INVALIDATED": "kyma.connectors.postgres.cdc._tables",
    "SLOT_MISSING": "kyma.connectors.postgres.cdc._tables",
    "slot_name": "kyma.connectors.postgres.cdc._tables",
    "CdcWorker": "kyma.connectors.postgres.cdc._worker",
    "prepare": "kyma.connectors.postgres.cdc._worker",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


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
