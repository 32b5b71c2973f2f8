"""Malformed requests and partial success, per the OTLP specification, on a real ``kyma serve``:
bad bodies answer INVALID_ARGUMENT / 400 with a google.rpc.Status and the server keeps
serving; records the tables cannot take are counted as rejected, the rest are stored."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request

import grpc
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"


def logs_json(service: str, *records: dict) -> dict:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    return {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": list(records)}]}]}


def record(body: str, **fields: str) -> dict:
    return {"timeUnixNano": "1767225600000000000", "body": {"stringValue": body}, **fields}


def post(serve, path: str, body: bytes, content_type: str, **headers: str):  # type: ignore[no-untyped-def]
    """POST to the OTLP/HTTP endpoint; (status, content type, body)."""
    request = urllib.request.Request(
        f"{serve.otlp_http_url}{path}",
        data=body,
        headers={"Content-Type": content_type, **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get_content_type(), answer.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers.get_content_type(), e.read()


def grpc_export(serve, method: str, body: bytes, response_type):  # type: ignore[no-untyped-def]
    address = serve.otlp_grpc_url.removeprefix("grpc://")
    with grpc.insecure_channel(address) as channel:
        export = channel.unary_unary(method, response_deserializer=response_type.FromString)
        return export(body, timeout=30)


def bodies(serve, service: str) -> list[str]:  # type: ignore[no-untyped-def]
    answer = serve.sql(f"SELECT body FROM otel_logs WHERE service_name = '{service}' ORDER BY 1")
    return [row[0] for row in answer["rows"]]


def assert_still_serving(serve, service: str) -> None:  # type: ignore[no-untyped-def]
    document = logs_json(service, record("still here"))
    status, _, _ = post(serve, "/v1/logs", json.dumps(document).encode(), "application/json")
    assert status == 200
    assert "still here" in bodies(serve, service)


def test_grpc_bad_protobuf_is_invalid_argument(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as failed:
        grpc_export(otlp_serve, LOGS_EXPORT, b"\xff\xff\xff\xff", ExportLogsServiceResponse)
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ExportLogsServiceRequest" in failed.value.details()
    assert_still_serving(otlp_serve, "grpc-bad-protobuf")


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-protobuf", b"\xff\xff\xff\xff"),
        ("application/json", b'{"resourceLogs": [{"scopeLogs": '),
        ("application/json", b'{"resourceLogs": "not a list"}'),
        ("application/json", json.dumps(logs_json("x", record("b", traceId="zz"))).encode()),
    ],
    ids=["protobuf", "truncated-json", "wrong-shape-json", "non-hex-trace-id"],
)
def test_http_bad_body_is_400_with_a_status(otlp_serve, content_type: str, body: bytes) -> None:  # type: ignore[no-untyped-def]
    status, answered_type, answer = post(otlp_serve, "/v1/logs", body, content_type)
    assert (status, answered_type) == (400, content_type)
    if content_type == "application/json":
        error = json.loads(answer)
        assert error["code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0] and error["message"]
    else:
        error = Status.FromString(answer)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0] and error.message
    assert_still_serving(otlp_serve, f"http-bad-{content_type}")


def test_http_unsupported_type_path_and_method(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    status, _, answer = post(otlp_serve, "/v1/logs", b"hello", "text/plain")
    assert status == 415 and "application/x-protobuf" in json.loads(answer)["message"]
    assert post(otlp_serve, "/v1/profiles", b"{}", "application/json")[0] == 404
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(f"{otlp_serve.otlp_http_url}/v1/logs", timeout=30)
    with failed.value:
        assert failed.value.code == 405


def test_grpc_partial_success_counts_rejected_records(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    kv = resource_spans.resource.attributes.add(key="service.name")
    kv.value.string_value = "grpc-partial"
    spans = resource_spans.scope_spans.add().spans
    spans.add(trace_id=bytes.fromhex(TRACE_ID), span_id=bytes.fromhex(SPAN_ID), name="kept")
    spans.add(trace_id=b"\x01\x02\x03", span_id=bytes.fromhex(SPAN_ID), name="short id")
    spans.add(
        trace_id=bytes.fromhex(TRACE_ID),
        span_id=bytes.fromhex(SPAN_ID),
        name="after 2262",
        start_time_unix_nano=2**64 - 1,
    )
    answer = grpc_export(
        otlp_serve, TRACE_EXPORT, request.SerializeToString(), ExportTraceServiceResponse
    )
    assert answer.partial_success.rejected_spans == 2
    assert "span 2: trace_id must be 16 bytes, got 3" in answer.partial_success.error_message
    found = otlp_serve.sql(
        "SELECT name, trace_id FROM otel_traces WHERE service_name = 'grpc-partial'"
    )
    assert found["rows"] == [["kept", TRACE_ID]]


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_http_json_partial_success_and_hex_ids(otlp_serve, gzipped: bool) -> None:  # type: ignore[no-untyped-def]
    service = f"json-partial-{gzipped}"
    document = logs_json(
        service,
        record("kept", traceId=TRACE_ID, spanId=SPAN_ID, unknownField="ignored"),
        record("short span id", traceId=TRACE_ID, spanId="abcd"),
    )
    body = json.dumps(document).encode()
    headers = {"Content-Encoding": "gzip"} if gzipped else {}
    status, content_type, answer = post(
        otlp_serve,
        "/v1/logs",
        gzip.compress(body) if gzipped else body,
        "application/json",
        **headers,
    )
    assert (status, content_type) == (200, "application/json")
    partial = json.loads(answer)["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"  # OTLP/JSON: int64 as a string
    assert "log record 2: span_id must be 8 bytes" in partial["errorMessage"]
    found = otlp_serve.sql(
        f"SELECT body, trace_id, span_id FROM otel_logs WHERE service_name = '{service}'"
    )
    assert found["rows"] == [["kept", TRACE_ID, SPAN_ID]]


def test_http_protobuf_full_success_answers_an_empty_response(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    kv = resource_logs.resource.attributes.add(key="service.name")
    kv.value.string_value = "protobuf-ok"
    resource_logs.scope_logs.add().log_records.add().body.string_value = "fine"
    status, content_type, answer = post(
        otlp_serve, "/v1/logs", request.SerializeToString(), "application/x-protobuf"
    )
    assert (status, content_type) == (200, "application/x-protobuf")
    assert not ExportLogsServiceResponse.FromString(answer).HasField("partial_success")
    assert bodies(otlp_serve, "protobuf-ok") == ["fine"]
