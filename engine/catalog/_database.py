"""The catalog database: one connection pool, the migrations, and transactions.

The engine's catalog and every store (connectors, CDC, sources, tokens, ...) share one
``CatalogDatabase``. Opening it applies every given owner's migrations in version order; a
store opened on a database that was not given its migrations applies them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import psycopg
import psycopg_pool

from kyma.engine.catalog._migrate import Migrations, migrate
from kyma.engine.errors import CatalogUnavailableError

ENGINE_MIGRATIONS = Migrations("kyma.migrations", "")


class CatalogDatabase:
    """A connection pool on the catalog database, with its schema brought up to date."""

    def __init__(
        self,
        url: str,
        migrations: Sequence[Migrations] = (),
        *,
        pool_size: int = 10,
        statement_timeout_seconds: float = 0,
    ) -> None:
        """``statement_timeout_seconds`` (0: none) bounds every catalog statement, so no
        statement can run on in the catalog database after its caller gave up."""
        self.url = url
        self.statement_timeout_seconds = statement_timeout_seconds
        # Object paths a store keeps alive (orphan GC must not delete them).
        self.references: list[Callable[[psycopg.Connection], set[str]]] = []
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            open=False,
            kwargs={"autocommit": True},
            configure=self._configure,
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except psycopg_pool.PoolTimeout as e:
            raise CatalogUnavailableError(f"catalog unreachable: {e}") from None
        self._migrations: list[Migrations] = []
        self.migrations_applied = self.require(*migrations)

    def require(self, *migrations: Migrations) -> list[str]:
        """Apply ``migrations`` (together, in version order) unless this database did."""
        new = [m for m in migrations if m not in self._migrations]
        if not new:
            return []
        with self.connection() as conn:
            applied = migrate(conn, new)
        self._migrations.extend(new)
        return applied

    def close(self) -> None:
        self._pool.close()

    def _configure(self, conn: psycopg.Connection) -> None:
        if self.statement_timeout_seconds:
            ms = max(1, int(self.statement_timeout_seconds * 1000))
            conn.execute("SELECT set_config('statement_timeout', %s, false)", (f"{ms}ms",))

    @contextmanager
    def connection(self, timeout: float = 30) -> Iterator[psycopg.Connection]:
        """A pooled connection; driver connection failures become CatalogUnavailableError."""
        try:
            with self._pool.connection(timeout=timeout) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as e:
            if isinstance(e, psycopg.errors.QueryCanceled):
                raise
            raise CatalogUnavailableError(f"catalog unavailable: {e}") from e

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """A pooled connection inside one transaction: committed on exit, rolled back on
        an exception."""
        with self.connection() as conn, conn.transaction():
            yield conn

    def ping(self, timeout: float = 30) -> None:
        with self.connection(timeout) as conn:
            conn.execute("SELECT 1")


class Store:
    """A layer's state on the catalog database: its ``migrations`` apply when it opens."""

    migrations: tuple[Migrations, ...] = ()

    def __init__(self, db: CatalogDatabase) -> None:
        self.db = db
        db.require(*self.migrations)
