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
        open_timeout_seconds: float = 30,
    ) -> None:
        """``statement_timeout_seconds`` (0: none) bounds every catalog statement, so no
        statement can run on in the catalog database after its caller gave up;
        ``open_timeout_seconds``: how long to wait for the first connection."""
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
            self._pool.open(wait=True, timeout=open_timeout_seconds)
        except psycopg_pool.PoolTimeout:
            self._pool.close()
            raise _unreachable(url, open_timeout_seconds) from None
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


def _unreachable(url: str, seconds: float) -> CatalogUnavailableError:
    """Why the catalog at ``url`` cannot be reached, from one more attempt (the pool keeps
    its errors to its log), naming the database without its password."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
        where = f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"
    except psycopg.ProgrammingError:
        return CatalogUnavailableError("catalog unreachable: the catalog URL is not a Postgres URL")
    try:
        psycopg.connect(url, connect_timeout=5).close()
        reason = "it answers now; try again"
    except psycopg.Error as e:
        reason = str(e).strip().splitlines()[0].removeprefix("connection failed: ")
    return CatalogUnavailableError(
        f"catalog unreachable: no connection to {where} within {seconds:g} s: {reason}"
    )
