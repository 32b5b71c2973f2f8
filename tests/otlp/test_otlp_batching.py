"""Group commit: a lone export commits at once, exports arriving during a commit share the
next one, batches keep their row bound; a failed commit fails all of them with
a retryable error (UNAVAILABLE / 503 on the wire); stopping commits what is pending."""

from __future__ import annotations

import json
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


class HeldWritePath:
    """A real write path whose first commit waits until ``release()``: a commit in progress
    for as long as a test needs one. Later commits go through at once."""

    def __init__(self, write_path) -> None:  # type: ignore[no-untyped-def]
        self.write_path = write_path
        self.held = threading.Event()  # the first commit has started and waits
        self._released = threading.Event()
        self._first = threading.Lock()

    def release(self) -> None:
        self._released.set()

    def ingest_batches(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self._first.acquire(blocking=False):
            self.held.set()
            assert self._released.wait(30), "the test never released the first commit"
        return self.write_path.ingest_batches(*args, **kwargs)


def wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    """Poll ``condition`` every 10 ms for at most 10 s."""
    for _ in range(1000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{what} did not happen in 10 s")


def row_counts(services, table: str) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(e.row_count for e in services.catalog.live_extents(table))


def test_a_lone_export_commits_at_once(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    """Nothing is being committed: the export does not wait for company (600 s here)."""
    commit = GroupCommit(services.write_path, numbers_table, max_rows=10_000, max_latency=600)
    try:
        commit.submit(numbers(0, 3), timeout=30)  # raises if it waited for the 600 s
        commit.submit(numbers(3, 4), timeout=30)
    finally:
        commit.close()
    assert len(services.catalog.snapshots(numbers_table)) == 2
    assert row_counts(services, numbers_table) == [3, 4]


def test_exports_during_a_commit_share_the_next_one(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    held = HeldWritePath(services.write_path)
    commit = GroupCommit(held, numbers_table, max_rows=10_000, max_latency=600)  # type: ignore[arg-type]
    try:
        with ThreadPoolExecutor(8) as pool:
            first = pool.submit(commit.submit, numbers(0, 10), 30)
            assert held.held.wait(10)
            rest = [pool.submit(commit.submit, numbers(i * 10, 10), 30) for i in range(1, 8)]
            wait_for(lambda: len(commit._pending) == 7, "seven exports queueing")
            assert not first.done()
            held.release()
            for future in [first, *rest]:
                future.result(timeout=30)
    finally:
        commit.close()
    assert len(services.catalog.snapshots(numbers_table)) == 2
    assert row_counts(services, numbers_table) == [10, 70]


def test_a_full_batch_goes_at_once_and_takes_at_most_max_rows(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    """Exports of 10 rows queue behind a held commit; with ``max_rows`` 15 each pair is full,
    so its older export commits alone (10 + 10 is past the bound) without waiting for the
    held commit or the 600 s; the last one, not full, waits for the held commit to end."""
    held = HeldWritePath(services.write_path)
    commit = GroupCommit(held, numbers_table, max_rows=15, max_latency=600)  # type: ignore[arg-type]
    try:
        with ThreadPoolExecutor(4) as pool:
            first = pool.submit(commit.submit, numbers(0, 5), 30)
            assert held.held.wait(10)
            exports = []
            for i in range(3):
                part = numbers(5 + 10 * i, 10)
                exports.append(pool.submit(commit.submit, part, 30))
                # this export (not an older one) is the one queueing: in submission order
                wait_for(
                    lambda part=part: [w.part for w in commit._pending] == [part],
                    "this export queueing",
                )
            exports[0].result(timeout=30)
            exports[1].result(timeout=30)
            assert not first.done() and not exports[2].done()
            held.release()
            first.result(timeout=30)
            exports[2].result(timeout=30)
    finally:
        commit.close()
    assert row_counts(services, numbers_table) == [5, 10, 10, 10]


def test_past_max_latency_a_batch_overlaps_the_commit(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    held = HeldWritePath(services.write_path)
    commit = GroupCommit(held, numbers_table, max_rows=10_000, max_latency=0.05)  # type: ignore[arg-type]
    try:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(commit.submit, numbers(0, 1), 30)
            assert held.held.wait(10)
            commit.submit(numbers(1, 2), timeout=30)  # on the second committing thread
            assert not first.done()
            held.release()
            first.result(timeout=30)
    finally:
        commit.close()
    assert row_counts(services, numbers_table) == [1, 2]


def test_nothing_is_lost_or_duplicated(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    """8 threads × 25 exports of 7 rows, distinct numbers, batches of at most 40 rows."""
    commit = GroupCommit(services.write_path, numbers_table, max_rows=40, max_latency=0.01)

    def export(thread: int) -> None:
        for i in range(25):
            commit.submit(numbers((thread * 25 + i) * 7, 7), timeout=30)

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(export, range(8)))
    finally:
        commit.close()
    answer = services.query.execute(
        f"SELECT count(*) AS c, count(DISTINCT n) AS d, min(n) AS lo, max(n) AS hi"
        f" FROM {numbers_table}"
    )
    assert answer.table.to_pylist() == [{"c": 1400, "d": 1400, "lo": 0, "hi": 1399}]
    assert max(row_counts(services, numbers_table)) <= 40
    assert commit.metrics.snapshot()["lag"] == 0


def test_a_batch_of_max_bytes_goes_without_waiting(services, numbers_table: str) -> None:  # type: ignore[no-untyped-def]
    """100 rows of int64 are 800 bytes of Arrow data: past max_bytes, rows far below max_rows,
    so they commit beside the held commit."""
    held = HeldWritePath(services.write_path)
    commit = GroupCommit(
        held,  # type: ignore[arg-type]
        numbers_table,
        max_rows=1_000_000,
        max_bytes=800,
        max_latency=600,
    )
    try:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(commit.submit, numbers(0, 1), 30)
            assert held.held.wait(10)
            commit.submit(numbers(1, 100), timeout=30)  # raises if it waited for the 600 s
            held.release()
            first.result(timeout=30)
    finally:
        commit.close()
    assert row_counts(services, numbers_table) == [1, 100]
    snap = commit.metrics.snapshot()
    assert (snap["rows_total"], snap["commits"], snap["lag"]) == (101, 2, 0)
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
    held = HeldWritePath(services.write_path)
    commit = GroupCommit(held, numbers_table, max_rows=10_000, max_latency=600)  # type: ignore[arg-type]
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(commit.submit, numbers(0, 1), 30)
        assert held.held.wait(10)
        waiting = pool.submit(commit.submit, numbers(1, 3), 30)
        wait_for(lambda: commit._pending, "the export queueing behind the held commit")
        closing = pool.submit(commit.close)
        waiting.result(timeout=30)  # stopping commits it without waiting for the 600 s
        held.release()
        closing.result(timeout=30)
        first.result(timeout=30)
    assert row_counts(services, numbers_table) == [1, 3]
    with pytest.raises(RetryableError, match="shutting down"):
        commit.submit(numbers(4, 1), timeout=30)


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
    # a waiting export lets the commit in progress finish (up to 3 s, so a loaded machine's
    # slow commit does not start a second one beside it) and commits with the others waiting
    options = OtlpOptions(grpc_port=0, http_port=0, batch_latency_ms=3000, threads=10)
    receiver = start_otlp_receiver(services.catalog, services.write_path, options)
    try:
        with ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda i: grpc_export(receiver, log_request(f"r{i}")), range(50)))
    finally:
        receiver.stop()
    extents = services.catalog.live_extents("otel_logs")
    assert sum(e.row_count for e in extents) == 50
    assert len(extents) <= 10, [e.row_count for e in extents]


def test_a_bad_export_among_good_ones_is_400_naming_the_field_and_loses_nothing(
    receiver,  # type: ignore[no-untyped-def]
    services,  # type: ignore[no-untyped-def]
) -> None:
    bad_json = b'{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"zz"}]}]}]}'

    def bad() -> tuple[int, dict]:
        request = urllib.request.Request(
            f"{receiver.http_url}/v1/logs",
            data=bad_json,
            headers={"Content-Type": "application/json"},
        )
        try:
            urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as e:
            with e:
                return e.code, json.loads(e.read())
        raise AssertionError("the bad export was accepted")

    with ThreadPoolExecutor(6) as pool:
        good = [pool.submit(http_export, receiver, log_request(f"r{i}")) for i in range(20)]
        refused = pool.submit(bad)
        assert [f.result(timeout=30) for f in good] == [200] * 20
        status, answer = refused.result(timeout=30)
    assert status == 400 and "traceId 'zz' is not hex" in answer["message"], answer
    assert http_export(receiver, log_request("after")) == 200  # still serving
    stored = services.query.execute(
        "SELECT count(DISTINCT body) AS n, count(*) AS c FROM otel_logs"
    )
    assert stored.table.to_pylist() == [{"n": 21, "c": 21}]
