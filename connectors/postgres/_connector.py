"""The Postgres connector: introspection with psycopg, Arrow transfer with ADBC.

Every session it opens pins the settings kyma's SQL relies on, whatever the source's role or
database defaults say: UTC (timestamp literals and AT TIME ZONE mean what they mean in kyma),
standard_conforming_strings, ISO dates, postgres intervals, floats in full, and pg_catalog
first on the search_path (no schema can shadow a built-in; tables are always qualified).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, urlsplit, urlunsplit

import adbc_driver_postgresql.dbapi as adbc
import psycopg
from sqlglot import exp

from kyma.connectors.base import (
    Connector,
    Fetched,
    SourceColumn,
    SourceTable,
    SparkTarget,
    SyncWorker,
)
from kyma.connectors.postgres import _dialect
from kyma.connectors.postgres._capabilities import POSTGRES
from kyma.connectors.postgres._introspect import introspect
from kyma.connectors.postgres._pool import ConnectionPool
from kyma.connectors.postgres._types import fetch_expression, padded, to_kyma
from kyma.connectors.secrets import redact
from kyma.connectors.spec import ConnectorSpec, Tls
from kyma.engine.errors import (
    KymaError,
    NotFoundError,
    PushdownFailedError,
    SourceUnreachableError,
    TlsFailedError,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from kyma.connectors.store import ConnectorRecord, ConnectorStore
    from kyma.engine.catalog import Catalog
    from kyma.ingest.write_path import WritePath

_SSLMODE = {"required": "require", "verify-full": "verify-full", "disabled": "disable"}
_SESSION = " ".join(
    f"-c {setting}"
    for setting in (
        "TimeZone=UTC",
        "extra_float_digits=3",  # floats exactly, always
        "standard_conforming_strings=on",
        "DateStyle=ISO,YMD",
        "IntervalStyle=postgres",
    )
)
# The role's own search_path stays (extensions' functions and types live on it), behind
# pg_catalog; a startup option cannot refer to it, so this runs once per new session.
_PIN_SEARCH_PATH = (
    "SELECT pg_catalog.set_config('search_path', pg_catalog.concat_ws(', ', 'pg_catalog',"
    " NULLIF(pg_catalog.current_setting('search_path'), '')), false)"
)
_NO_CLEARTEXT = "!password,!md5"
_TLS_MARKERS = ("ssl", "certificate", "tls")
# Errors that mean the source parsed or ran the SQL and said no (not a lost connection).
_REJECTED = (
    psycopg.ProgrammingError,
    psycopg.DataError,
    adbc.ProgrammingError,
    adbc.DataError,
    adbc.IntegrityError,
)


class PostgresConnector(Connector):
    dialect = _dialect.NAME
    capabilities = POSTGRES

    def __init__(
        self,
        spec: ConnectorSpec,
        password: str | None,
        *,
        on_failure: Callable[[KymaError], None] = lambda _: None,
        on_success: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(spec, password, on_failure=on_failure, on_success=on_success)
        self._password = password
        self._tables: dict[tuple[str, str], SourceTable] = {}
        self._refreshed_at: float | None = None
        self._warnings: list[str] = []
        self._lock = threading.Lock()
        self.pool = ConnectionPool(
            spec.name,
            self._adbc_connect,
            size=spec.connection.pool_size,
            timeout=spec.connection.pool_timeout_seconds,
        )

    # ---------------------------------------------------------------- catalog

    def table(self, schema: str, name: str) -> SourceTable:
        if (schema, name) not in self._tables:
            self.tables(refresh=True)
        found = self._tables.get((schema, name))
        if found is None:
            raise NotFoundError(
                f"table {self.name}.{schema}.{name} does not exist or is out of the"
                " connector's scope"
            )
        return found

    def tables(self, *, refresh: bool = False) -> list[SourceTable]:
        with self._lock:
            if refresh or self._refreshed_at is None:
                with self.guard(), psycopg.connect(**self.libpq_params()) as conn:
                    conn.execute(_PIN_SEARCH_PATH)
                    found, warnings = introspect(
                        conn, self.spec.scope, numeric_mode=self.spec.connection.numeric_mode
                    )
                self._tables = {(t.schema, t.name): t for t in found}
                self._warnings = warnings
                self._refreshed_at = time.time()
                self._on_success()
            return list(self._tables.values())

    @property
    def warnings(self) -> list[str]:
        """Columns whose types have no kyma mapping (they read as dynamic)."""
        return list(self._warnings)

    # ---------------------------------------------------------------- queries

    def output_expression(
        self, column: exp.Expression, source: SourceColumn, alias: str
    ) -> exp.Expression:
        return fetch_expression(
            column,
            source.source_type,
            alias,
            numeric_mode=self.spec.connection.numeric_mode,
            geometry_mode=self.spec.scope.geometry_mode,
            exact_numeric=True,
        )

    def pattern_operand(self, column: exp.Expression, source: SourceColumn) -> exp.Expression:
        return padded(column, source.source_type)

    def compared_literal(self, source: SourceColumn, literal: str) -> str:
        # A literal compared with char(n) is a char(n) too: its trailing blanks don't count.
        return literal.rstrip(" ") if source.source_type.typname == "bpchar" else literal

    def text_order(self, source: SourceColumn) -> str | None:
        pg_type = source.source_type
        return None if pg_type.orders_as_bytes else pg_type.collation

    def fetch(self, sql: str, columns: Mapping[str, SourceColumn]) -> Fetched:
        vectors = {name: dim for name, c in columns.items() if (dim := c.column.type.vector_dim)}
        with self.guard(sql), self.pool.connection() as conn, conn.cursor() as cur:
            cur.execute(sql)
            raw = cur.fetch_arrow_table()
        self._on_success()
        return Fetched(to_kyma(raw, vectors=vectors, exact_numeric=True), raw.nbytes)

    # ---------------------------------------------------------------- status

    def status(self) -> dict[str, Any]:
        return {
            "pool": self.pool.stats(),
            "tables_seen": len(self._tables),
            "introspected_at": self._refreshed_at,
            "type_warnings": self.warnings,
        }

    def close(self) -> None:
        self.pool.close()

    @property
    def redacted_source(self) -> str:
        database = urlsplit(self.spec.connection.url).path.lstrip("/")
        return f"postgres://***@***/{database}"

    # ---------------------------------------------------------------- CDC (modes sync, both)

    @classmethod
    def resnapshots_after(cls, disabled_reason: str | None) -> bool:
        from kyma.connectors.postgres.cdc import RESNAPSHOT_REASONS

        return disabled_reason in RESNAPSHOT_REASONS

    def prepare_sync(
        self, record: ConnectorRecord, catalog: Catalog, records: ConnectorStore, cdc: Any
    ) -> None:
        from kyma.connectors.postgres.cdc import prepare

        prepare(record, self, catalog, records, cdc)

    def sync_worker(
        self,
        record: ConnectorRecord,
        catalog: Catalog,
        records: ConnectorStore,
        cdc: Any,
        write_path: WritePath,
        query: Callable[[str], pa.Table],
        *,
        on_disabled: Callable[[str, str], None],
        spark: SparkTarget | None = None,
    ) -> SyncWorker:
        from kyma.connectors.postgres.cdc import CdcWorker

        return CdcWorker(
            record,
            self,
            catalog,
            records,
            cdc,
            write_path,
            query,
            on_disabled=on_disabled,
            spark=spark,
        )

    def release_sync(self, connector_id: int, *, publication: bool) -> None:
        """Drop the replication slot (and the publication of the same name)."""
        from kyma.connectors.postgres.cdc import release, slot_name

        slot = slot_name(connector_id)
        try:
            release(self.libpq_params(), slot, publication=publication)
        except psycopg.Error as e:
            raise SourceUnreachableError(
                f"could not drop replication slot {slot} on the source"
                f" ({self.redact(str(e))}); it holds WAL there until dropped:"
                f" SELECT pg_drop_replication_slot('{slot}')"
            ) from None

    def sync_lag_bytes(self, confirmed: int) -> int | None:
        from kyma.connectors.cdc_state import lsn_text

        sql = f"SELECT (pg_current_wal_lsn() - '{lsn_text(confirmed)}'::pg_lsn)::float8 AS lag"
        answer = self.fetch(sql, {}).table
        return max(0, int(answer.column("lag")[0].as_py()))

    # ---------------------------------------------------------------- connections

    def libpq_params(self) -> dict[str, Any]:
        """libpq keywords (with the secret) for a psycopg connection to the source."""
        conn = self.spec.connection
        params: dict[str, Any] = {
            "conninfo": conn.url,
            "sslmode": _SSLMODE[conn.tls],
            "connect_timeout": conn.connect_timeout_seconds,
            "application_name": "kyma-federation",
            "options": _SESSION,
        }
        if conn.ca_file:
            params["sslrootcert"] = conn.ca_file
        if conn.tls == Tls.DISABLED:
            # Without TLS a password (or its md5 hash) would cross the network readable by
            # anyone on the path, or be asked for by a server posing as the source: libpq
            # (16+, bundled with psycopg and ADBC) answers only SCRAM or no authentication.
            params["require_auth"] = _NO_CLEARTEXT
        if self._password is not None:
            params["password"] = self._password
        return params

    def adbc_uri(self) -> str:
        """The libpq URI for ADBC, which takes no separate keywords."""
        params = self.libpq_params()
        parts = urlsplit(params.pop("conninfo"))
        netloc = parts.netloc
        password = params.pop("password", None)
        if password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user}:{quote(password, safe='')}@{host}"
        query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
        existing = f"{parts.query}&" if parts.query else ""
        return urlunsplit((parts.scheme, netloc, parts.path, existing + query, ""))

    def _adbc_connect(self) -> Any:
        # Autocommit: a pooled connection must not sit idle in a transaction, holding locks
        # and an old snapshot on the source.
        conn = adbc.connect(self.adbc_uri(), autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(_PIN_SEARCH_PATH)
                cur.fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def guard(self, sql: str | None = None) -> _Translate:
        """A context in which driver errors become kyma's (``sql``: the statement run)."""
        return _Translate(self, sql)

    def redact(self, text: str) -> str:
        return redact(text, self._password, quote(self._password or "", safe="") or None)


class _Translate:
    """Turn driver errors into kyma's, with secrets redacted; report them to the registry."""

    def __init__(self, connector: PostgresConnector, sql: str | None) -> None:
        self.connector = connector
        self.sql = sql

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type | None, error: BaseException | None, _tb: object
    ) -> Literal[False]:
        if isinstance(error, KymaError):
            self.connector._on_failure(error)
        if error is None or isinstance(error, KymaError) or not isinstance(error, Exception):
            return False
        message = self.connector.redact(" ".join(str(error).split()))
        translated = _classify(self.connector.name, error, message, self.sql)
        self.connector._on_failure(translated)
        raise translated from None


def _classify(name: str, error: Exception, message: str, sql: str | None) -> KymaError:
    lowered = message.lower()
    rejected = isinstance(error, _REJECTED)
    if sql is not None and rejected:
        return PushdownFailedError(f"connector {name!r}: the source rejected {sql!r}: {message}")
    if any(marker in lowered for marker in _TLS_MARKERS):
        return TlsFailedError(f"tls_failed: {message}")
    return SourceUnreachableError(f"connector {name!r}: source unreachable: {message}")
