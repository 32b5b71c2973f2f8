"""The three OTLP signals: their messages, endpoints, table columns and converters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from kyma.engine.types import Column

from ._convert import Fill, convert
from ._logs import fill_logs
from ._metrics import count_points, fill_metrics
from ._tables import LOG_COLUMNS, METRIC_COLUMNS, SPAN_COLUMNS
from ._traces import fill_spans
from ._values import Outcome


@dataclass(frozen=True)
class Signal:
    name: str  # "logs", "traces", "metrics": also the OTLP/HTTP path /v1/<name>
    grpc_service: str  # the gRPC service's full name; its one method is Export
    request: type[Any]
    response: type[Any]
    rejected_field: str  # the partial-success field counting what was left out
    columns: tuple[Column, ...]
    fill: Fill
    count: Callable[[Any], int]  # the records of a request, without converting them

    def convert(self, requests: Sequence[Any]) -> tuple[pa.RecordBatch, list[Outcome | Exception]]:
        """Requests → one batch, and each request's outcome or the error it fails with."""
        return convert(self.name, self.columns, self.fill, requests)

    def answer(self, outcome: Outcome) -> Any:
        """The Export response, with partial success when records were rejected."""
        response = self.response()
        if outcome.rejected:
            setattr(response.partial_success, self.rejected_field, outcome.rejected)
            response.partial_success.error_message = outcome.error_message
        return response


def _records(groups: str, scopes: str, items: str) -> Callable[[Any], int]:
    """Counts a request's records from the lengths of its scopes' lists."""

    def count(request: Any) -> int:
        return sum(
            len(getattr(scope, items))
            for group in getattr(request, groups)
            for scope in getattr(group, scopes)
        )

    return count


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
            fill_logs,
            _records("resource_logs", "scope_logs", "log_records"),
        ),
        Signal(
            "traces",
            _service(trace_service_pb2, "TraceService"),
            trace_service_pb2.ExportTraceServiceRequest,
            trace_service_pb2.ExportTraceServiceResponse,
            "rejected_spans",
            SPAN_COLUMNS,
            fill_spans,
            _records("resource_spans", "scope_spans", "spans"),
        ),
        Signal(
            "metrics",
            _service(metrics_service_pb2, "MetricsService"),
            metrics_service_pb2.ExportMetricsServiceRequest,
            metrics_service_pb2.ExportMetricsServiceResponse,
            "rejected_data_points",
            METRIC_COLUMNS,
            fill_metrics,
            count_points,
        ),
    )
}
