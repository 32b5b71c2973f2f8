"""The Postgres catalog: tables, columns, snapshots, manifest, ingest ledger, and commits."""

from kyma.engine.catalog._catalog import Catalog, check_identifier
from kyma.engine.catalog._cdc import CdcState, CdcTable, Chunk, lsn_int, lsn_text
from kyma.engine.catalog._cdc import advance_table as advance_cdc_table
from kyma.engine.catalog._cdc import forget_chunks as forget_cdc_chunks
from kyma.engine.catalog._cdc import record_chunk as record_cdc_chunk
from kyma.engine.catalog._column_stats import ColumnWrite
from kyma.engine.catalog._column_stats import record as column_stats_record
from kyma.engine.catalog._commit import CommitEvent, Payload
from kyma.engine.catalog._connectors import ConnectorRecord
from kyma.engine.catalog._files import SourceFile
from kyma.engine.catalog._files import ingested as file_ingested
from kyma.engine.catalog._ledger import LedgerEntry
from kyma.engine.catalog._ledger import record as ledger_record
from kyma.engine.catalog._model import (
    CommitResult,
    ExtentRef,
    ManifestEntry,
    SnapshotInfo,
    TableInfo,
)
from kyma.engine.catalog._options import parse_duration, retention_seconds, schema_evolution
from kyma.engine.catalog._positions import Claim, SourcePosition
from kyma.engine.catalog._positions import advance as advance_positions
from kyma.engine.catalog._sources import SourceRecord
from kyma.engine.catalog._tokens import TokenRecord

__all__ = [
    "Catalog",
    "CdcState",
    "CdcTable",
    "Claim",
    "ColumnWrite",
    "CommitEvent",
    "CommitResult",
    "ConnectorRecord",
    "ExtentRef",
    "LedgerEntry",
    "ManifestEntry",
    "Payload",
    "SnapshotInfo",
    "SourcePosition",
    "SourceFile",
    "SourceRecord",
    "TableInfo",
    "TokenRecord",
    "advance_cdc_table",
    "forget_cdc_chunks",
    "record_cdc_chunk",
    "Chunk",
    "advance_positions",
    "check_identifier",
    "column_stats_record",
    "file_ingested",
    "ledger_record",
    "lsn_int",
    "lsn_text",
    "parse_duration",
    "retention_seconds",
    "schema_evolution",
]
