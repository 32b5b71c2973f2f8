"""The three OTLP signals: their messages, endpoints, table columns and decoders.

Spans and log records are decoded from the request's protobuf bytes on the export's thread,
by the compiled decoder (``_wire``), into one Arrow batch per export; a group commit joins
them. Metrics are parsed by protobuf and converted once per group on its committing thread
(``_convert``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from kyma.engine.native import otlp_wire
from kyma.engine.types import Column

from ._codec import decode_protobuf
from ._convert import convert
from ._metrics import count_points, fill_metrics
from ._tables import LOG_COLUMNS, METRIC_COLUMNS, SPAN_COLUMNS
from ._values import Outcome
from ._wire import Decoded, WireDecoder

Assembled = tuple[pa.RecordBatch, list[Outcome | Exception]]


@dataclass(frozen=True)
class Signal:
    name: str  # "logs", "traces", "metrics": also the OTLP/HTTP path /v1/<name>
    grpc_service: str  # the gRPC service's full name; its one method is Export
    request: type[Any]
    response: type[Any]
    rejected_field: str  # the partial-success field counting what was left out
    columns: tuple[Column, ...]
    read: Callable[[bytes], Any]  # a request's protobuf bytes → the part its commit takes
    count: Callable[[Any], int]  # the records of a part (rejected ones too)
    assemble: Callable[[Sequence[Any]], Assembled]  # parts → one batch, and each outcome

    def read_message(self, message: Any) -> Any:
        """The part of a request parsed from OTLP/JSON."""
        return self.read(message.SerializeToString())

    def answer(self, outcome: Outcome) -> Any:
        """The Export response, with partial success when records were rejected."""
        response = self.response()
        if outcome.rejected:
            setattr(response.partial_success, self.rejected_field, outcome.rejected)
            response.partial_success.error_message = outcome.error_message
        return response


def _joined(parts: Sequence[Decoded]) -> Assembled:
    return pa.concat_batches([part.batch for part in parts]), [part.outcome for part in parts]


def _records(part: Decoded) -> int:
    return part.records


def _wire_signal(
    name: str, module: Any, service: str, kind: str, signal: int, **rest: Any
) -> Signal:
    request = getattr(module, f"Export{kind}ServiceRequest")
    decoder = WireDecoder(signal, rest["columns"], name, request.__name__)
    return Signal(
        name,
        module.DESCRIPTOR.services_by_name[service].full_name,
        request,
        getattr(module, f"Export{kind}ServiceResponse"),
        read=decoder.decode,
        count=_records,
        assemble=_joined,
        **rest,
    )


def _metric_parts(body: bytes) -> Any:
    return decode_protobuf(metrics_service_pb2.ExportMetricsServiceRequest, body)


def _metric_batch(requests: Sequence[Any]) -> Assembled:
    return convert("metrics", METRIC_COLUMNS, fill_metrics, requests)


SIGNALS = {
    signal.name: signal
    for signal in (
        _wire_signal(
            "logs",
            logs_service_pb2,
            "LogsService",
            "Logs",
            otlp_wire.LOGS,
            rejected_field="rejected_log_records",
            columns=LOG_COLUMNS,
        ),
        _wire_signal(
            "traces",
            trace_service_pb2,
            "TraceService",
            "Trace",
            otlp_wire.TRACES,
            rejected_field="rejected_spans",
            columns=SPAN_COLUMNS,
        ),
        Signal(
            "metrics",
            metrics_service_pb2.DESCRIPTOR.services_by_name["MetricsService"].full_name,
            metrics_service_pb2.ExportMetricsServiceRequest,
            metrics_service_pb2.ExportMetricsServiceResponse,
            "rejected_data_points",
            METRIC_COLUMNS,
            read=_metric_parts,
            count=count_points,
            assemble=_metric_batch,
        ),
    )
}
