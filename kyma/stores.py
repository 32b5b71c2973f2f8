"""The catalog database and what each layer keeps in it, opened once.

Each store belongs to the package that uses it and holds its own migrations; the database
applies all of them in version order when it opens.
"""

from __future__ import annotations

from dataclasses import dataclass

from kyma.connectors.cdc_state import CdcStore
from kyma.connectors.store import MIGRATIONS as CONNECTOR_MIGRATIONS
from kyma.connectors.store import ConnectorStore
from kyma.engine.catalog import ENGINE_MIGRATIONS, CatalogDatabase, Migrations, PostgresCatalog
from kyma.ingest.filedrop.files import MIGRATIONS as FILE_MIGRATIONS
from kyma.ingest.kafka.positions import MIGRATIONS as POSITION_MIGRATIONS
from kyma.ingest.ledger import Ledger
from kyma.ingest.source_store import MIGRATIONS as SOURCE_MIGRATIONS
from kyma.ingest.source_store import SourceStore
from kyma.tokens import MIGRATIONS as TOKEN_MIGRATIONS
from kyma.tokens import TokenStore

MIGRATIONS: tuple[Migrations, ...] = (
    ENGINE_MIGRATIONS,
    CONNECTOR_MIGRATIONS,
    POSITION_MIGRATIONS,
    SOURCE_MIGRATIONS,
    FILE_MIGRATIONS,
    TOKEN_MIGRATIONS,
)


@dataclass
class Stores:
    db: CatalogDatabase
    catalog: PostgresCatalog
    ledger: Ledger
    connectors: ConnectorStore
    cdc: CdcStore
    sources: SourceStore  # with .positions (Kafka) and .files (file-drop)
    tokens: TokenStore

    @classmethod
    def open(cls, url: str, *, pool_size: int = 10, statement_timeout_seconds: float = 0) -> Stores:
        db = CatalogDatabase(
            url,
            MIGRATIONS,
            pool_size=pool_size,
            statement_timeout_seconds=statement_timeout_seconds,
        )
        return cls(
            db,
            PostgresCatalog(db),
            Ledger(db),
            ConnectorStore(db),
            CdcStore(db),
            SourceStore(db),
            TokenStore(db),
        )

    def close(self) -> None:
        self.catalog.close()  # its presence (the database stays: it is ``db``)
        self.db.close()
