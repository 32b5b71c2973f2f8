"""Prometheus metrics of one kyma process, served as text by ``GET /metrics``.

prometheus_client (the Prometheus authors' Python client) renders the text format and
keeps counters and histograms thread-safe. Each Metrics has a registry of its own, so
several apps in one process (the tests) do not share counts. The engine knows nothing of
Prometheus: it calls listeners (catalog commits, query statements) that land here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from kyma.engine.catalog import CommitEvent
from kyma.engine.query import QueryEvent

# Commits that rewrite data (compaction) or retire it (retention) are not ingest.
_NOT_INGEST = {"compaction", "retention"}
_PRUNING = (
    "extents_total",
    "extents_after_catalog",
    "blocks_total",
    "blocks_after_stats",
    "blocks_after_tokens",
)
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

CONTENT_TYPE = CONTENT_TYPE_LATEST

#: The running sources of one kind: (name, type, SourceMetrics.snapshot()) each.
SourceReport = Callable[[], Iterable[tuple[str, str, dict[str, Any]]]]


class Metrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        # process_* (CPU seconds, resident memory, open fds, start time), python_gc_*, python_info
        ProcessCollector(registry=registry)
        GCCollector(registry=registry)
        PlatformCollector(registry=registry)
        self.ingest_rows = Counter(
            "kyma_ingest_rows", "Rows committed by ingest", ["path"], registry=registry
        )
        self.ingest_bytes = Counter(
            "kyma_ingest_bytes",
            "Bytes of extents committed by ingest",
            ["path"],
            registry=registry,
        )
        self.commit_seconds = Histogram(
            "kyma_commit_seconds",
            "Catalog commit latency, retries included",
            ["path"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self.commit_conflicts = Counter(
            "kyma_commit_conflicts",
            "Commit attempts that lost the compare-and-swap on the table head and retried",
            ["path"],
            registry=registry,
        )
        self.queries = Counter(
            "kyma_queries", "Statements run, by outcome", ["outcome"], registry=registry
        )
        self.query_seconds = Histogram(
            "kyma_query_seconds",
            "Statement latency, by outcome",
            ["outcome"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self.pruning = Counter(
            "kyma_query_pruning",
            "Extents and blocks the pruning cascade saw (stage=*_total) and kept"
            " (stage=extents_after_catalog, blocks_after_stats, blocks_after_tokens)",
            ["stage"],
            registry=registry,
        )
        self.query_plans = Counter(
            "kyma_query_plans",
            "Queries by how their plan came (plan=planned: made for it; kept: its text's;"
            " shape: its shape's, another statement's literals replaced)",
            ["plan"],
            registry=registry,
        )
        self.compaction_pending = Gauge(
            "kyma_compaction_pending_tables",
            "Tables that received rows since the background compactor last checked them",
            registry=registry,
        )
        self.queries_running = Gauge(
            "kyma_queries_running",
            "Statements holding a query slot (abandoned ones until they stop)",
            registry=registry,
        )
        self.http_requests = Counter(
            "kyma_http_requests",
            "HTTP requests answered, by method, route (the URL rule, e.g. /v1/ingest/<table>;"
            " unmatched for none) and status",
            ["method", "route", "status"],
            registry=registry,
        )

        self._sources = _SourcesCollector()
        registry.register(self._sources)

    def track_sources(self, report: SourceReport) -> None:
        """Report the sources ``report`` names at every scrape (``kyma_source_*``)."""
        self._sources.reports.append(report)

    def observe_commit(self, event: CommitEvent) -> None:
        path = event.source.split(":", 1)[0] or "unknown"
        self.commit_seconds.labels(path).observe(event.seconds)
        if event.attempts > 1:
            self.commit_conflicts.labels(path).inc(event.attempts - 1)
        if path not in _NOT_INGEST:
            self.ingest_rows.labels(path).inc(event.rows)
            self.ingest_bytes.labels(path).inc(event.bytes)

    def observe_query(self, event: QueryEvent) -> None:
        self.queries.labels(event.outcome).inc()
        self.query_seconds.labels(event.outcome).observe(event.seconds)
        plan = event.stats.get("plan")
        if isinstance(plan, str):
            self.query_plans.labels(plan).inc()
        for stage in _PRUNING:
            value = event.stats.get(stage)
            if isinstance(value, int) and value:
                self.pruning.labels(stage).inc(value)

    def track_running(self, running: Callable[[], float]) -> None:
        self.queries_running.set_function(running)

    def track_compaction(self, pending: Callable[[], float]) -> None:
        self.compaction_pending.set_function(pending)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _SourcesCollector:
    """Every running source's record (ingest/source_metrics.py), read at scrape time."""

    def __init__(self) -> None:
        self.reports: list[SourceReport] = []

    def describe(self) -> list[Metric]:
        return []  # collected at scrape time only

    def collect(self) -> Iterator[Metric]:
        labels = ["source", "type"]
        families: dict[str, GaugeMetricFamily | CounterMetricFamily] = {
            "rows_total": CounterMetricFamily(
                "kyma_source_rows", "Rows a running source committed since it started", None, labels
            ),
            "rows_per_second": GaugeMetricFamily(
                "kyma_source_rows_per_second",
                "Rows a source committed per second, over the last 10 s",
                labels=labels,
            ),
            "lag": GaugeMetricFamily(
                "kyma_source_lag",
                "How far behind its input a source is, in unit (messages, files, rows)",
                labels=[*labels, "unit"],
            ),
            "last_commit_at": GaugeMetricFamily(
                "kyma_source_last_commit_timestamp_seconds",
                "When a source last committed (Unix time)",
                labels=labels,
            ),
            "errors": CounterMetricFamily(
                "kyma_source_errors", "Errors a running source met since it started", None, labels
            ),
            "last_error_at": GaugeMetricFamily(
                "kyma_source_last_error_timestamp_seconds",
                "When a source last met an error (Unix time)",
                labels=labels,
            ),
            "last_error": GaugeMetricFamily(
                "kyma_source_last_error_info",
                "A source's latest error, as the error label (its status has it too)",
                labels=[*labels, "error"],
            ),
            "degraded_since": GaugeMetricFamily(
                "kyma_source_degraded_since_timestamp_seconds",
                "Since when a degraded source cannot work (Unix time); absent when it can",
                labels=labels,
            ),
        }
        degraded = GaugeMetricFamily(
            "kyma_source_degraded", "1 while a source runs but cannot work", labels=labels
        )
        for report in self.reports:
            for name, kind, snap in report():
                each = [name, kind]
                degraded.add_metric(each, 1.0 if snap["degraded_reason"] else 0.0)
                for key, family in families.items():
                    value = snap.get(key)
                    if value is None:
                        continue
                    if key == "lag":
                        family.add_metric([*each, snap["lag_unit"]], value)
                    elif key == "last_error":
                        family.add_metric([*each, str(value)[:200]], 1.0)
                    else:
                        family.add_metric(each, value)
        yield from families.values()
        yield degraded
