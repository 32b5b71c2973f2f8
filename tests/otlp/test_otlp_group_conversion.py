"""A group of exports is converted once, on its committing thread: one batch, and each
request still answered on its own (its rejected records, or its own error)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from test_otlp_batching import HeldWritePath, wait_for

from kyma.engine.errors import IngestError
from kyma.ingest.otlp._batcher import GroupCommit
from kyma.ingest.otlp._signals import SIGNALS
from kyma.ingest.otlp._tables import METRIC_COLUMNS, prepare_table
from kyma.ingest.otlp._values import Outcome

START = 1_767_225_600_000_000_000


def spans(*trace_ids: bytes, end: int = START + 1) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for number, trace_id in enumerate(trace_ids):
        scope.spans.add(
            name=f"s{number}",
            trace_id=trace_id,
            span_id=b"\x01" * 8,
            start_time_unix_nano=START,
            end_time_unix_nano=end,
        )
    return request


def histogram(count: int) -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name=f"h{count}")
    metric.histogram.data_points.add(count=count, time_unix_nano=START)
    return request


def test_each_request_of_a_group_counts_its_own_rejected_records() -> None:
    good = b"\xab" * 16
    traces = SIGNALS["traces"]
    requests = [spans(good, b"\x00" * 3), spans(good), spans(good, end=2**64 - 1)]
    batch, outcomes = traces.assemble([traces.read(r.SerializeToString()) for r in requests])
    assert batch.num_rows == 2
    assert batch.column("trace_id").to_pylist() == [good.hex()] * 2
    assert outcomes == [
        Outcome(1, "span 2: trace_id must be 16 bytes, got 3"),
        Outcome(),
        Outcome(
            1, f"span 1: end_time_unix_nano {2**64 - 1} is past the latest timestamp kyma stores"
        ),
    ]


def test_a_request_whose_values_do_not_fit_fails_alone() -> None:
    batch, [first, bad, last] = SIGNALS["metrics"].assemble(
        [histogram(3), histogram(2**64 - 1), histogram(5)]
    )
    assert batch.column("count").to_pylist() == [3, 5]
    assert first == last == Outcome()
    assert isinstance(bad, IngestError) and "the metrics cannot be stored" in str(bad)


def test_a_group_behind_a_commit_is_converted_and_committed_once(services) -> None:  # type: ignore[no-untyped-def]
    """Three exports queue behind a held commit: they share the next snapshot, except the
    one whose count does not fit, which fails with its own IngestError (not retryable)."""
    prepare_table(services.catalog, "points", METRIC_COLUMNS)
    held = HeldWritePath(services.write_path)
    metrics = SIGNALS["metrics"]
    commit = GroupCommit(
        held,  # type: ignore[arg-type]
        "points",
        max_rows=10_000,
        max_latency=600,
        assemble=metrics.assemble,
    )
    try:
        with ThreadPoolExecutor(4) as pool:

            def submit(request: ExportMetricsServiceRequest):  # type: ignore[no-untyped-def]
                return commit.submit(request, 30, rows=metrics.count(request), nbytes=100)

            first = pool.submit(submit, histogram(1))
            assert held.held.wait(10)
            queued = [pool.submit(submit, histogram(n)) for n in (2, 2**64 - 1, 4)]
            wait_for(lambda: len(commit._pending) == 3, "three exports queueing")
            held.release()
            assert first.result(timeout=30) == Outcome()
            assert queued[0].result(timeout=30) == queued[2].result(timeout=30) == Outcome()
            with pytest.raises(IngestError, match="cannot be stored"):
                queued[1].result(timeout=30)
    finally:
        commit.close()
    extents = services.catalog.live_extents("points")
    assert sorted(e.row_count for e in extents) == [1, 2]
    assert len(services.catalog.snapshots("points")) == 2
