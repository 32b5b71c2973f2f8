"""Group commit: concurrent exports share one snapshot; a failed commit fails all of them with
a retryable error (UNAVAILABLE / 503 on the wire); stopping commits what is pending."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import grpc
import pyarrow as pa
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from kyma.engine.errors import NotFoundError, RetryableError
from kyma.engine.types import Column, KymaType
from kyma.ingest.otlp import OtlpOptions, start_otlp_receiver
from kyma.ingest.otlp._batcher import GroupCommit

LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def numbers(start: int, count: int) -> pa.RecordBatch:
    return pa.record_batch({"n": pa.array(range(start, start + count), pa.int64())})


def submit_together(commit: GroupCommit, exports: int, rows: int) -> list[BaseException | None]:
    """``exports`` threads submit ``rows`` rows each at the same moment; what each raised."""
    barrier = threading.Barrier(exports)

    def submit(i: int) -> BaseException | None:
        barrier.wait(timeout=10)
        try:
            commit.submit(numbers(i * rows, rows), timeout=30)
        except RetryableError as e:
            return e
        return None

    with ThreadPoolExecutor(exports) as pool:
        return list(pool.map(submit, range(exports)))


@pytest.fixture
def numbers_table(catalog) -> str:  # type: ignore[no-untyped-def]
    catalog.create_table("numbers", [Column("n", KymaType("long"))])
    return "numbers"


def test_concurrent_exports_share_one_snapshot(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    commit = GroupCommit(services.write_path, numbers_table, max_rows=10_000, max_latency=1.0)
    try:
        assert submit_together(commit, exports=8, rows=10) == [None] * 8
    finally:
        commit.close()
    assert len(services.catalog.snapshots(numbers_table)) == 1
    [extent] = services.catalog.live_extents(numbers_table)
    assert extent.row_count == 80


def test_a_full_batch_commits_without_waiting_for_the_latency(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    commit = GroupCommit(services.write_path, numbers_table, max_rows=100, max_latency=600)
    try:
        commit.submit(numbers(0, 100), timeout=30)  # raises if it waited for the 600 s
    finally:
        commit.close()
    assert len(services.catalog.live_extents(numbers_table)) == 1


def test_a_batch_of_max_bytes_commits_without_waiting(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    """100 rows of int64 are 800 bytes of Arrow data: past max_bytes, rows far below max_rows."""
    commit = GroupCommit(
        services.write_path, numbers_table, max_rows=1_000_000, max_bytes=800, max_latency=600
    )
    try:
        commit.submit(numbers(0, 100), timeout=30)  # raises if it waited for the 600 s
    finally:
        commit.close()
    assert len(services.catalog.live_extents(numbers_table)) == 1
    snap = commit.metrics.snapshot()
    assert (snap["rows_total"], snap["commits"], snap["lag"]) == (100, 1, 0)
    assert snap["last_commit_at"] is not None and snap["last_error"] is None


def test_a_failed_commit_fails_every_export_retryably(services) -> None:  # type: ignore[no-untyped-def]
    commit = GroupCommit(services.write_path, "no_such_table", max_rows=10_000, max_latency=1.0)
    try:
        errors = submit_together(commit, exports=4, rows=5)
    finally:
        commit.close()
    assert all(isinstance(e, RetryableError) for e in errors), errors
    assert all(isinstance(e.__cause__, NotFoundError) for e in errors)
    snap = commit.metrics.snapshot()
    assert snap["rows_total"] == 0 and "no_such_table" in snap["last_error"]


def test_stop_commits_what_is_pending(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    commit = GroupCommit(services.write_path, numbers_table, max_rows=10_000, max_latency=600)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(commit.submit, numbers(0, 3), 30)
        while not commit._pending:  # the export is queued, its batch not yet due
            threading.Event().wait(0.01)
        commit.close()
        waiting.result(timeout=30)
    [extent] = services.catalog.live_extents(numbers_table)
    assert extent.row_count == 3
    with pytest.raises(RetryableError, match="shutting down"):
        commit.submit(numbers(3, 1), timeout=30)


def log_request(body: str) -> bytes:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = body
    return request.SerializeToString()


def grpc_export(receiver, body: bytes) -> None:  # type: ignore[no-untyped-def]
    with grpc.insecure_channel(receiver.grpc_url.removeprefix("grpc://")) as channel:
        export = channel.unary_unary(
            LOGS_EXPORT, response_deserializer=ExportLogsServiceResponse.FromString
        )
        export(body, timeout=30)


def http_export(receiver, body: bytes) -> int:  # type: ignore[no-untyped-def]
    request = urllib.request.Request(
        f"{receiver.http_url}/v1/logs",
        data=body,
        headers={"Content-Type": "application/x-protobuf"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as e:
        with e:
            return e.code


def test_a_failed_commit_answers_unavailable_and_503_then_recovers(receiver, services) -> None:  # type: ignore[no-untyped-def]
    grpc_export(receiver, log_request("first"))
    services.catalog.drop_table("otel_logs")  # the receiver's next commit fails
    with pytest.raises(grpc.RpcError) as failed:
        grpc_export(receiver, log_request("lost"))
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    grpc_export(receiver, log_request("second"))  # the table is made again
    services.catalog.drop_table("otel_logs")
    assert http_export(receiver, log_request("lost")) == 503
    assert http_export(receiver, log_request("third")) == 200
    [extent] = services.catalog.live_extents("otel_logs")
    assert extent.row_count == 1


def test_many_small_exports_make_few_extents(services) -> None:  # type: ignore[no-untyped-def]
    options = OtlpOptions(grpc_port=0, http_port=0, batch_latency_ms=300, threads=10)
    receiver = start_otlp_receiver(services.catalog, services.write_path, options)
    try:
        with ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda i: grpc_export(receiver, log_request(f"r{i}")), range(50)))
    finally:
        receiver.stop()
    extents = services.catalog.live_extents("otel_logs")
    assert sum(e.row_count for e in extents) == 50
    assert len(extents) <= 10, [e.row_count for e in extents]
