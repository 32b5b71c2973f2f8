"""``ExportMetricsServiceRequest`` → rows of the metrics table (``METRIC_COLUMNS``).

One row per data point of a gauge, sum, histogram, exponential histogram or summary; the
columns a point's type does not have are null. Exemplars are not stored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import cbor2
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from ._values import Columns, Context, Rejected, dynamic, nanos

TEMPORALITIES = {
    number: name.removeprefix("AGGREGATION_TEMPORALITY_").lower()
    for name, number in AggregationTemporality.items()
}


def count_points(request: Any) -> int:
    """The data points of a request, without converting them."""
    points = 0
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is not None:
                    points += len(getattr(metric, kind).data_points)
    return points


def fill_metrics(columns: Columns, request: Any) -> None:
    """One row per data point of ``request``; a point with a time past 2262 is rejected."""
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            context = Context.of(resource_metrics.resource, scope_metrics.scope)
            shared = dataclasses.asdict(context)
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:
                    continue  # a metric without points has nothing to store
                data = getattr(metric, kind)
                described = {
                    **shared,
                    "metric_name": metric.name,
                    "metric_description": metric.description or None,
                    "metric_unit": metric.unit or None,
                    "metric_type": kind,
                    "aggregation_temporality": TEMPORALITIES.get(
                        getattr(data, "aggregation_temporality", None)
                    ),
                    "is_monotonic": getattr(data, "is_monotonic", None),
                }
                for point in data.data_points:
                    columns.seen += 1
                    try:
                        row = {**described, **_point(point), **POINT_VALUES[kind](point)}
                    except Rejected as e:
                        columns.reject("data point", e)
                        continue
                    columns.add_row(row)


def _point(point: Any) -> dict[str, Any]:
    return {
        "_timestamp": nanos(point.time_unix_nano, "time_unix_nano"),
        "start_timestamp": nanos(point.start_time_unix_nano, "start_time_unix_nano"),
        "attributes": dynamic(point.attributes),
    }


def _number(point: Any) -> dict[str, Any]:
    kind = point.WhichOneof("value")
    return {"value": None if kind is None else float(getattr(point, kind))}


def _optional(point: Any, *names: str) -> dict[str, Any]:
    """proto3 ``optional`` fields: the value when set, else null."""
    return {name: getattr(point, name) if point.HasField(name) else None for name in names}


def _counts(values: Any) -> bytes | None:
    return cbor2.dumps(list(values)) if values else None


def _histogram(point: Any) -> dict[str, Any]:
    return {
        "count": point.count,
        **_optional(point, "sum", "min", "max"),
        "bucket_counts": _counts(point.bucket_counts),
        "explicit_bounds": _counts(point.explicit_bounds),
    }


def _exponential_histogram(point: Any) -> dict[str, Any]:
    return {
        "count": point.count,
        **_optional(point, "sum", "min", "max"),
        "scale": point.scale,
        "zero_count": point.zero_count,
        "zero_threshold": point.zero_threshold,
        "positive_offset": point.positive.offset,
        "positive_bucket_counts": _counts(point.positive.bucket_counts),
        "negative_offset": point.negative.offset,
        "negative_bucket_counts": _counts(point.negative.bucket_counts),
    }


def _summary(point: Any) -> dict[str, Any]:
    quantiles = [{"quantile": q.quantile, "value": q.value} for q in point.quantile_values]
    return {
        "count": point.count,
        "sum": point.sum,
        "quantiles": cbor2.dumps(quantiles) if quantiles else None,
    }


POINT_VALUES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "gauge": _number,
    "sum": _number,
    "histogram": _histogram,
    "exponential_histogram": _exponential_histogram,
    "summary": _summary,
}
