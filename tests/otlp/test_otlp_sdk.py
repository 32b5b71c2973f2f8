"""The OpenTelemetry SDK's own OTLP exporters, gRPC and HTTP, into a real ``kyma serve``.

An acknowledged export is committed: every query runs right after the exporter returned,
with no waiting.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
    OTLPMetricExporter as GrpcMetrics,
)
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
    OTLPMetricExporter as HttpMetrics,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

PROTOCOLS = ["grpc", "http"]


def exporter(serve, kind: str, protocol: str):  # type: ignore[no-untyped-def]
    if protocol == "grpc":
        endpoint = serve.otlp_grpc_url.replace("grpc://", "http://")
        grpc_class = {"traces": GrpcSpans, "logs": GrpcLogs, "metrics": GrpcMetrics}[kind]
        return grpc_class(endpoint=endpoint, insecure=True, timeout=30)
    http_class = {"traces": HttpSpans, "logs": HttpLogs, "metrics": HttpMetrics}[kind]
    return http_class(endpoint=f"{serve.otlp_http_url}/v1/{kind}", timeout=30)


def rows(serve, sql: str) -> list[dict]:  # type: ignore[no-untyped-def]
    answer = serve.sql(sql)
    names = [c["name"] for c in answer["columns"]]
    return [dict(zip(names, row, strict=True)) for row in answer["rows"]]


def test_serve_prints_both_otlp_endpoints(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    banner = "".join(otlp_serve.output)
    assert otlp_serve.otlp_grpc_url.startswith("grpc://127.0.0.1:")
    assert f"{otlp_serve.otlp_grpc_url} (OTLP)" in banner
    assert otlp_serve.otlp_http_url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_spans_with_attributes_events_and_links(otlp_serve, protocol: str) -> None:  # type: ignore[no-untyped-def]
    service = f"checkout-{protocol}"
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "deployment.environment": "test"})
    )
    provider.add_span_processor(BatchSpanProcessor(exporter(otlp_serve, "traces", protocol)))
    tracer = provider.get_tracer("shop.cart", "1.2.3")
    linked = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1))
    with tracer.start_as_current_span(
        "GET /cart", kind=SpanKind.SERVER, attributes={"http.method": "GET", "http.status": 200}
    ) as parent:
        parent.add_event("cache miss", {"cache.key": "cart:42"})
        with tracer.start_as_current_span(
            "SELECT carts", links=[Link(linked, {"link.kind": "retry"})]
        ) as child:
            child.set_status(Status(StatusCode.ERROR, "timeout"))
    assert provider.force_flush(30_000)
    provider.shutdown()

    found = rows(
        otlp_serve,
        "SELECT service_name, attributes['http.method'] AS method, attributes['http.status']"
        " AS status, resource_attributes['deployment.environment'] AS env,"
        " name, kind, status_code, status_message, trace_id, span_id, parent_span_id, events,"
        " links, scope_name, scope_version, duration_ns, _timestamp, end_timestamp"
        f" FROM otel_traces WHERE service_name = '{service}' ORDER BY _timestamp",
    )
    assert len(found) == 2, found
    server, client = found
    parent_ctx, child_ctx = parent.get_span_context(), child.get_span_context()
    assert server["method"] == "GET" and server["status"] == "200" and server["env"] == "test"
    assert (server["name"], server["kind"], server["status_code"]) == (
        "GET /cart",
        "SERVER",
        "UNSET",
    )
    assert server["trace_id"] == client["trace_id"] == format(parent_ctx.trace_id, "032x")
    assert server["span_id"] == format(parent_ctx.span_id, "016x")
    assert server["parent_span_id"] is None
    assert client["parent_span_id"] == server["span_id"]
    assert client["span_id"] == format(child_ctx.span_id, "016x")
    assert (client["kind"], client["status_code"]) == ("INTERNAL", "ERROR")
    assert client["status_message"] == "timeout"
    [event] = server["events"]
    assert (event["name"], event["attributes"]) == ("cache miss", {"cache.key": "cart:42"})
    assert client["links"] == [
        {
            "trace_id": format(0xABC, "032x"),
            "span_id": format(0xDEF, "016x"),
            "trace_state": "",
            "attributes": {"link.kind": "retry"},
        }
    ]
    assert (server["scope_name"], server["scope_version"]) == ("shop.cart", "1.2.3")
    assert server["duration_ns"] > 0 and server["end_timestamp"] > server["_timestamp"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_log_records_with_severity_body_and_trace_context(otlp_serve, protocol: str) -> None:  # type: ignore[no-untyped-def]
    service = f"payments-{protocol}"
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(exporter(otlp_serve, "logs", protocol))
    )
    logger = provider.get_logger("payments.charge")
    with TracerProvider().get_tracer("t").start_as_current_span("charge") as span:
        logger.emit(
            body="card declined",
            severity_number=SeverityNumber.WARN,
            severity_text="WARN",
            attributes={"http.method": "POST", "amount": 12.5, "tags": ["a", "b"]},
        )
    logger.emit(body={"order": 7, "items": [1, 2]}, severity_number=SeverityNumber.INFO)
    provider.shutdown()

    found = rows(
        otlp_serve,
        "SELECT body, severity_number, severity_text, attributes['http.method'] AS method,"
        " attributes, trace_id, span_id, trace_flags, scope_name, _timestamp,"
        f" observed_timestamp FROM otel_logs WHERE service_name = '{service}'"
        " ORDER BY observed_timestamp",
    )
    assert len(found) == 2, found
    declined, structured = found
    context = span.get_span_context()
    assert declined["body"] == "card declined"
    assert (declined["severity_number"], declined["severity_text"]) == (13, "WARN")
    assert declined["method"] == "POST"
    assert declined["attributes"] == {"http.method": "POST", "amount": 12.5, "tags": ["a", "b"]}
    assert declined["trace_id"] == format(context.trace_id, "032x")
    assert declined["span_id"] == format(context.span_id, "016x")
    assert declined["trace_flags"] == int(context.trace_flags)  # sampled, W3C random bit
    assert declined["scope_name"] == "payments.charge"
    assert declined["_timestamp"] is not None
    assert json.loads(structured["body"]) == {"order": 7, "items": [1, 2]}
    assert structured["trace_id"] is None and structured["severity_number"] == 9


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_metric_points_of_every_kind(otlp_serve, protocol: str) -> None:  # type: ignore[no-untyped-def]
    service = f"orders-{protocol}"
    reader = PeriodicExportingMetricReader(
        exporter(otlp_serve, "metrics", protocol), export_interval_millis=3_600_000
    )
    provider = MeterProvider(
        resource=Resource.create({"service.name": service}),
        metric_readers=[reader],
        views=[
            View(
                instrument_name="payload.size", aggregation=ExponentialBucketHistogramAggregation()
            )
        ],
    )
    meter = provider.get_meter("orders")
    meter.create_counter("orders", unit="1", description="orders placed").add(
        3, {"http.method": "POST"}
    )
    latency = meter.create_histogram("latency", unit="ms")
    for value in (5, 15, 150):
        latency.record(value, {"http.method": "GET"})
    size = meter.create_histogram("payload.size", unit="By")
    for value in (1, 2, 4, 1000):
        size.record(value)
    meter.create_gauge("queue.depth").set(7, {"queue": "emails"})
    provider.shutdown()  # collects and exports once

    found = {
        r["metric_name"]: r
        for r in rows(
            otlp_serve,
            "SELECT metric_name, metric_type, metric_unit, metric_description,"
            " aggregation_temporality, is_monotonic, value, count, sum, min, max,"
            " attributes['http.method'] AS method, attributes['queue'] AS queue,"
            " bucket_counts, explicit_bounds, scale, zero_count, positive_offset,"
            " positive_bucket_counts, _timestamp, start_timestamp"
            f" FROM otel_metrics WHERE service_name = '{service}'",
        )
    }
    assert set(found) == {"orders", "latency", "payload.size", "queue.depth"}
    orders = found["orders"]
    assert (orders["metric_type"], orders["value"], orders["method"]) == ("sum", 3.0, "POST")
    assert (orders["aggregation_temporality"], orders["is_monotonic"]) == ("cumulative", True)
    assert (orders["metric_unit"], orders["metric_description"]) == ("1", "orders placed")
    assert orders["_timestamp"] is not None and orders["start_timestamp"] is not None
    latency = found["latency"]
    assert latency["metric_type"] == "histogram" and latency["method"] == "GET"
    assert (latency["count"], latency["sum"], latency["min"], latency["max"]) == (3, 170, 5, 150)
    assert sum(latency["bucket_counts"]) == 3
    assert len(latency["bucket_counts"]) == len(latency["explicit_bounds"]) + 1
    exponential = found["payload.size"]
    assert exponential["metric_type"] == "exponential_histogram"
    assert exponential["count"] == 4 and exponential["sum"] == 1007
    assert sum(exponential["positive_bucket_counts"]) + exponential["zero_count"] == 4
    assert isinstance(exponential["scale"], int)
    gauge = found["queue.depth"]
    assert (gauge["metric_type"], gauge["value"], gauge["queue"]) == ("gauge", 7.0, "emails")
    assert gauge["aggregation_temporality"] is None and gauge["is_monotonic"] is None


def test_the_readme_query_over_otel_traces(otlp_serve) -> None:  # type: ignore[no-untyped-def]
    provider = TracerProvider(resource=Resource.create({"service.name": "readme"}))
    provider.add_span_processor(BatchSpanProcessor(exporter(otlp_serve, "traces", "grpc")))
    tracer = provider.get_tracer("readme")
    for method in ("GET", "GET", "POST"):
        with tracer.start_as_current_span(
            "request", kind=SpanKind.SERVER, attributes={"http.method": method}
        ) as span:
            span.set_status(Status(StatusCode.ERROR))
    assert provider.force_flush(30_000)
    provider.shutdown()
    found = otlp_serve.sql(
        "SELECT service_name, attributes['http.method'] AS method, count(*) AS spans,"
        " avg(duration_ns)::double precision / 1e6 AS avg_ms"
        " FROM otel_traces WHERE kind = 'SERVER' AND status_code = 'ERROR'"
        " AND service_name = 'readme' GROUP BY 1, 2 ORDER BY spans DESC"
    )["rows"]
    assert [row[:3] for row in found] == [["readme", "GET", 2], ["readme", "POST", 1]]
    assert all(avg_ms > 0 for *_, avg_ms in found)
