"""The documented mapping of OTLP fields onto table columns, and tables made by hand."""

from __future__ import annotations

import base64
import socket

import cbor2
import grpc
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import AGGREGATION_TEMPORALITY_DELTA

from kyma.engine.errors import ConfigError, SchemaError
from kyma.engine.types import Column, KymaType
from kyma.ingest.otlp import OtlpOptions, start_otlp_receiver
from kyma.ingest.otlp._signals import SIGNALS
from kyma.ingest.otlp._tables import LOG_COLUMNS, prepare_table

LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


def value(**kind) -> AnyValue:  # type: ignore[no-untyped-def]
    return AnyValue(**kind)


def rows(batch) -> list[dict]:  # type: ignore[no-untyped-def]
    """The batch's rows with dynamic columns decoded."""
    decoded = []
    for row in batch.to_pylist():
        decoded.append({k: cbor2.loads(v) if isinstance(v, bytes) else v for k, v in row.items()})
    return decoded


def test_any_values_become_json_values_and_bodies_text() -> None:
    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    nested = AnyValue()
    nested.kvlist_value.values.add(key="inner", value=value(int_value=1))
    listed = AnyValue()
    listed.array_value.values.extend([value(bool_value=True), value(double_value=0.5)])
    record = records.add(severity_number=17, severity_text="ERROR", event_name="login")
    record.attributes.extend(
        [
            KeyValue(key="map", value=nested),
            KeyValue(key="list", value=listed),
            KeyValue(key="raw", value=value(bytes_value=b"\x00\xff")),
            KeyValue(key="none", value=AnyValue()),
        ]
    )
    record.body.CopyFrom(nested)
    records.add()  # no body, no attributes, no time

    batch = SIGNALS["logs"].read(request.SerializeToString()).batch
    [first, empty] = rows(batch)
    assert first["attributes"] == {
        "map": {"inner": 1},
        "list": [True, 0.5],
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "none": None,
    }
    assert first["body"] == '{"inner":1}'
    assert (first["severity_number"], first["severity_text"]) == (17, "ERROR")
    assert first["event_name"] == "login"
    assert empty["body"] is None and empty["attributes"] is None
    assert empty["_timestamp"] is None  # the ingest time, set by the write path
    assert empty["service_name"] is None and empty["resource_attributes"] is None


def test_sum_and_summary_points() -> None:
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    scope.scope.name, scope.scope.version = "meter", "2.0"
    total = scope.metrics.add(name="requests")
    total.sum.aggregation_temporality = AGGREGATION_TEMPORALITY_DELTA
    total.sum.data_points.add(as_int=41, time_unix_nano=1_767_225_600_000_000_000)
    summary = scope.metrics.add(name="rtt").summary.data_points.add(count=2, sum=3.0)
    summary.quantile_values.add(quantile=0.5, value=1.0)
    scope.metrics.add(name="no points")  # neither stored nor rejected

    batch, [outcome] = SIGNALS["metrics"].assemble([request])
    assert outcome.rejected == 0
    requests, rtt = rows(batch)
    assert (requests["value"], requests["aggregation_temporality"]) == (41.0, "delta")
    assert requests["is_monotonic"] is False and requests["scope_version"] == "2.0"
    assert (rtt["metric_type"], rtt["count"], rtt["sum"]) == ("summary", 2, 3.0)
    assert rtt["quantiles"] == [{"quantile": 0.5, "value": 1.0}]
    assert rtt["value"] is None and rtt["_timestamp"] is None


def export_log(receiver) -> None:  # type: ignore[no-untyped-def]
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "hi"
    with grpc.insecure_channel(receiver.grpc_url.removeprefix("grpc://")) as channel:
        export = channel.unary_unary(
            LOGS_EXPORT, response_deserializer=ExportLogsServiceResponse.FromString
        )
        export(request.SerializeToString(), timeout=30)


def test_a_table_made_by_hand_is_used_and_given_the_missing_columns(receiver, services) -> None:  # type: ignore[no-untyped-def]
    services.catalog.create_table(
        "otel_logs", [Column("body", KymaType("string")), Column("team", KymaType("string"))]
    )
    export_log(receiver)
    info = services.catalog.get_table("otel_logs")
    assert {c.name for c in LOG_COLUMNS} | {"team", "props"} == {c.name for c in info.columns}
    assert sum(e.row_count for e in services.catalog.live_extents("otel_logs")) == 1


def test_a_table_of_another_shape_fails_the_export_as_a_precondition(receiver, services) -> None:  # type: ignore[no-untyped-def]
    services.catalog.create_table("otel_logs", [Column("body", KymaType("long"))])
    with pytest.raises(grpc.RpcError) as failed:
        export_log(receiver)
    assert failed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "column 'body' is long, expected string" in failed.value.details()
    with pytest.raises(SchemaError):
        prepare_table(services.catalog, "otel_logs", LOG_COLUMNS)


def test_a_taken_port_is_a_config_error_naming_its_setting(services) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for options, setting in (
            (OtlpOptions(grpc_port=port, http_port=0), "KYMA_OTLP_GRPC_PORT"),
            (OtlpOptions(grpc_port=0, http_port=port), "KYMA_OTLP_HTTP_PORT"),
        ):
            with pytest.raises(ConfigError, match=setting):
                start_otlp_receiver(services.catalog, services.write_path, options)
