"""The three OTLP signals: their messages, endpoints, table columns and converters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from kyma.engine.types import Column

from ._logs import logs_batch
from ._metrics import metrics_batch
from ._tables import LOG_COLUMNS, METRIC_COLUMNS, SPAN_COLUMNS
from ._traces import spans_batch
from ._values import Converted


@dataclass(frozen=True)
class Signal:
    name: str  # "logs", "traces", "metrics": also the OTLP/HTTP path /v1/<name>
    grpc_service: str  # the gRPC service's full name; its one method is Export
    request: type[Any]
    response: type[Any]
    rejected_field: str  # the partial-success field counting what was left out
    columns: tuple[Column, ...]
    convert: Callable[[Any], Converted]

    def answer(self, converted: Converted) -> Any:
        """The Export response, with partial success when records were rejected."""
        response = self.response()
        if converted.rejected:
            setattr(response.partial_success, self.rejected_field, converted.rejected)
            response.partial_success.error_message = converted.error_message
        return response


def _service(module: Any, name: str) -> str:
    return module.DESCRIPTOR.services_by_name[name].full_name


SIGNALS = {
    signal.name: signal
    for signal in (
        Signal(
            "logs",
            _service(logs_service_pb2, "LogsService"),
            logs_service_pb2.ExportLogsServiceRequest,
            logs_service_pb2.ExportLogsServiceResponse,
            "rejected_log_records",
            LOG_COLUMNS,
            logs_batch,
        ),
        Signal(
            "traces",
            _service(trace_service_pb2, "TraceService"),
            trace_service_pb2.ExportTraceServiceRequest,
            trace_service_pb2.ExportTraceServiceResponse,
            "rejected_spans",
            SPAN_COLUMNS,
            spans_batch,
        ),
        Signal(
            "metrics",
            _service(metrics_service_pb2, "MetricsService"),
            metrics_service_pb2.ExportMetricsServiceRequest,
            metrics_service_pb2.ExportMetricsServiceResponse,
            "rejected_data_points",
            METRIC_COLUMNS,
            metrics_batch,
        ),
    )
}
