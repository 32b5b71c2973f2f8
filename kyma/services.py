"""The parts a running kyma is made of, wired from Settings.

With no settings this is the embedded default: a Postgres catalog kyma owns under
``<home>/catalog`` and an object store in ``<home>/objects``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from kyma.connectors.registry import ConnectorRegistry
from kyma.connectors.secrets import SecretPolicy
from kyma.console.live import LiveHub
from kyma.engine import vacuum
from kyma.engine.catalog import Catalog, retention_seconds
from kyma.engine.compaction import CompactionResult, compact_table
from kyma.engine.errors import ConfigError
from kyma.engine.format import SegmentFormat
from kyma.engine.format.choice import segment_format
from kyma.engine.gc import collect_orphans
from kyma.engine.query import QueryEngine, QueryLimits, QueryResult
from kyma.engine.query.dialect import KymaStatement
from kyma.engine.retention import apply_retention
from kyma.engine.storage import ObjectStore
from kyma.ingest.encode import FormatSpec
from kyma.ingest.encode_workers import EncodeWorkers
from kyma.ingest.sources import SourceRegistry, StoreOpener
from kyma.ingest.sql_writes import SqlWriter
from kyma.ingest.write_path import WritePath
from kyma.jobs import JobRegistry, store_config
from kyma.logs import log_query
from kyma.metrics import Metrics
from kyma.settings import Settings
from kyma.stores import Stores

if TYPE_CHECKING:
    from kyma.pgwire._backends import Backends


@dataclass
class Services:
    settings: Settings
    catalog: Catalog
    store: ObjectStore
    format: SegmentFormat
    query: QueryEngine
    write_path: WritePath
    connectors: ConnectorRegistry
    sources: SourceRegistry
    jobs: JobRegistry
    stores: Stores
    backends: Backends  # the Postgres protocol sessions (pg_stat_activity)
    metrics: Metrics = field(default_factory=Metrics)
    live: LiveHub = field(default_factory=LiveHub)  # the console's live tail
    compacting: threading.Lock = field(default_factory=threading.Lock)  # one table at a time

    def __post_init__(self) -> None:
        self.catalog.commit_listeners.append(self.metrics.observe_commit)
        self.catalog.commit_listeners.append(self.live.publish)
        self.live.max_subscribers = max(1, self.settings.http_threads // 2)
        self.query.gate.listeners.append(self.metrics.observe_query)
        self.query.gate.listeners.append(log_query)
        self.metrics.track_running(lambda: self.query.gate.running)
        self.metrics.track_sources(self.sources.metrics)

    def run_maintenance(self) -> dict[str, int]:
        """One round: materialized views brought up to date, retention, compaction and VACUUM
        of every table, the ledger sweeper, orphan GC."""
        kept = self.query.matviews.catch_up_all()
        tables = self.catalog.list_tables()
        expired = 0
        for table in tables:
            seconds = retention_seconds(table.options)
            if seconds is not None:
                expired += apply_retention(self.catalog, table.name, seconds).extents_removed
        merged = sum(self.compact(t.name).extents_in for t in tables)
        grace = timedelta(seconds=self.settings.gc_grace_seconds)
        keep = self.settings.snapshot_keep_seconds
        erased = sum(
            vacuum.vacuum_table(
                self.catalog, self.store, self.format, t.name, keep_seconds=keep, grace=grace
            ).rows_erased
            for t in tables
        )
        swept = self.stores.ledger.sweep()
        orphans = collect_orphans(self.catalog, self.store, grace)
        return {
            "extents_past_retention": expired,
            "extents_compacted": merged,
            "deleted_rows_erased": erased,
            "ledger_entries_swept": swept,
            "orphans_deleted": len(orphans),
            "materialized_views_kept_up": kept,
        }

    def close(self) -> None:
        """Stop the sources' and connectors' threads and pools and the ingest workers (not the
        catalog or store)."""
        self.sources.close()
        self.connectors.close()
        self.write_path.close()

    def compact(self, table: str, *, tiered: bool = False) -> CompactionResult:
        """Compact ``table`` here, or on Spark's executors when a Spark master is set.
        ``tiered``: only groups that grow their largest extent by half (``compaction.grows``:
        the background compactor's policy)."""
        with self.compacting:  # the maintenance round and the compactor never race here
            return self._compact(table, tiered)

    def _compact(self, table: str, tiered: bool) -> CompactionResult:
        rewriter = None
        if self.settings.spark_master:
            from kyma.engine.spark.compaction import on_spark
            from kyma.ingest.load import spark_session

            master, log = self.settings.spark_master, self.settings.home.absolute() / "spark.log"
            rewriter = on_spark(
                lambda: spark_session(master, log),
                self.jobs.store,
                self.settings.extent_format,
                self.settings.block_rows,
            )
        return compact_table(
            self.catalog,
            self.store,
            self.format,
            table,
            target_rows=self.settings.compaction_target_rows,
            rewriter=rewriter,
            tiered=tiered,
        )


@contextmanager
def open_services(
    settings: Settings, log: Callable[[str], None] = print, *, owner: bool = False
) -> Iterator[Services]:
    """Start (or connect to) the catalog and object store; stop what was started on exit.

    An embedded Postgres that was already running (another kyma's, e.g. a ``kyma serve`` on
    the same home) is adopted and left running on exit, unless ``owner`` (``kyma serve``: the
    process that owns the home's catalog, adopting one a killed server left behind).
    """
    embedded = None
    catalog_url = settings.catalog_url
    if catalog_url is None:
        from kyma.runtime.postgres import EmbeddedPostgres

        embedded = EmbeddedPostgres(
            settings.home.absolute() / "catalog", bin_dir=settings.pg_bin_dir, log=log
        )
        catalog_url = embedded.start()
    try:
        # An ingest request may hold one connection for its idempotency lock and use another.
        stores = Stores.open(
            catalog_url,
            pool_size=2 * settings.http_threads + 4,
            statement_timeout_seconds=settings.catalog_statement_timeout_seconds,
        )
        try:
            url = settings.object_store or f"file://{settings.home.absolute() / 'objects'}"
            services = wire_services(settings, stores, store_config(settings, url).connect())
            try:
                yield services
            finally:
                services.close()
        finally:
            stores.close()
    finally:
        if embedded is not None and (owner or not embedded.adopted):
            embedded.stop()


def wire_services(settings: Settings, stores: Stores, store: ObjectStore) -> Services:
    """The parts of a running kyma on an open catalog database and store, wired from
    ``settings``: the one wiring of ``kyma serve``, the CLI commands and the tests'
    ``services`` fixture. ``Services.close`` stops what it started."""
    # here, not at the top: pgcatalog → pgwire._types → kyma.server → kyma.services
    from kyma.engine.query import RunningStatements
    from kyma.pgcatalog import CatalogRelations
    from kyma.pgwire._backends import Backends

    catalog = stores.catalog
    fmt = segment_format(settings.extent_format, settings.block_rows)
    connectors = ConnectorRegistry(
        catalog,
        stores.connectors,
        stores.cdc,
        SecretPolicy(settings.resolved_secrets_dir.absolute(), settings.home.absolute()),
    )
    write_path = WritePath(
        catalog,
        stores.ledger,
        store,
        fmt,
        idempotency_wait_seconds=settings.idempotency_wait_seconds,
        max_keys_per_row=settings.max_keys_per_row,
        max_nesting_depth=settings.max_nesting_depth,
        workers=encode_workers(settings, store),
    )
    jobs = JobRegistry(settings, store.url, write_path)
    running = RunningStatements()
    backends = Backends(running)
    sources = SourceRegistry(
        catalog,
        stores.sources,
        write_path,
        _drop_store_opener(settings),
        jobs.load_file if jobs.spark_available() else None,
    )
    return Services(
        settings=settings,
        catalog=catalog,
        store=store,
        format=fmt,
        query=QueryEngine(
            catalog,
            store,
            fmt,
            connectors,
            statements=(sources.statement, _vacuum_statement(settings, catalog, store, fmt)),
            limits=query_limits(settings),
            writer=SqlWriter(write_path),
            decoded_bytes=settings.query_cache_bytes,
            relations=CatalogRelations(backends),
            running=running,
            import_dirs=settings.allowed_import_dirs,
        ),
        write_path=write_path,
        connectors=connectors,
        sources=sources,
        jobs=jobs,
        stores=stores,
        backends=backends,
    )


def _vacuum_statement(
    settings: Settings, catalog: Catalog, store: ObjectStore, fmt: SegmentFormat
) -> Callable[[KymaStatement], QueryResult | None]:
    return vacuum.statement(
        catalog,
        store,
        fmt,
        keep_seconds=settings.snapshot_keep_seconds,
        grace=timedelta(seconds=settings.gc_grace_seconds),
    )


def encode_workers(settings: Settings, store: ObjectStore) -> EncodeWorkers | None:
    """The ingest worker processes (started on first use), or None to encode in process."""
    size = settings.ingest_workers
    if size < 0:
        raise ConfigError(f"KYMA_INGEST_WORKERS: expected 0 or more, got {size}")
    if size == 0:
        return None
    fmt = FormatSpec(settings.extent_format, settings.block_rows)
    return EncodeWorkers(size, store_config(settings, store.url), fmt)


def query_limits(settings: Settings) -> QueryLimits:
    return QueryLimits(
        timeout_seconds=settings.query_timeout_seconds,
        memory_bytes=settings.query_memory_bytes,
        max_concurrent=settings.max_concurrent_queries,
        max_result_rows=settings.max_result_rows,
        max_result_bytes=settings.max_result_bytes,
        max_statement_bytes=settings.max_statement_bytes,
        max_expression_depth=settings.max_expression_depth,
        max_in_list_values=settings.max_in_list_values,
        max_plan_relations=settings.max_plan_relations,
    )


def _drop_store_opener(settings: Settings) -> StoreOpener:
    """Stores for file-drop paths, with kyma's S3 settings unless a source names an endpoint."""

    def open_drop_store(url: str, s3_endpoint_url: str | None) -> ObjectStore:
        config = store_config(settings, url)
        return dataclasses.replace(
            config,
            cache_dir=str(Path(config.cache_dir) / "drops"),
            endpoint_url=s3_endpoint_url or config.endpoint_url,
            create=False,  # a drop folder is the user's: it must exist, nothing is made in it
        ).connect()

    return open_drop_store
