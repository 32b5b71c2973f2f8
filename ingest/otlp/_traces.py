"""``ExportTraceServiceRequest`` → rows of the traces table (``SPAN_COLUMNS``)."""

from __future__ import annotations

from typing import Any

import cbor2
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from ._tables import SPAN_COLUMNS
from ._values import Columns, Converted, Rejected, attributes, dynamic, hex_id, nanos

KINDS = {number: name.removeprefix("SPAN_KIND_") for name, number in Span.SpanKind.items()}
STATUS_CODES = {
    number: name.removeprefix("STATUS_CODE_") for name, number in Status.StatusCode.items()
}


def spans_batch(request: Any) -> Converted:
    """One row per span; a span with a malformed id or time is rejected."""
    columns = Columns(SPAN_COLUMNS)
    c = columns.lists
    for span in columns.walk(request.resource_spans, "scope_spans", "spans"):
        try:
            trace_id = hex_id(span.trace_id, 16, "trace_id")
            span_id = hex_id(span.span_id, 8, "span_id")
            parent_span_id = hex_id(span.parent_span_id, 8, "parent_span_id")
            start = nanos(span.start_time_unix_nano, "start_time_unix_nano")
            end = nanos(span.end_time_unix_nano, "end_time_unix_nano")
            links = _links(span.links)
        except Rejected as e:
            columns.reject("span", e)
            continue
        c["_timestamp"].append(start)
        c["end_timestamp"].append(end)
        c["duration_ns"].append(end - start if start and end else None)
        c["trace_id"].append(trace_id)
        c["span_id"].append(span_id)
        c["parent_span_id"].append(parent_span_id)
        c["trace_state"].append(span.trace_state or None)
        c["name"].append(span.name)
        c["kind"].append(KINDS.get(span.kind, str(span.kind)))
        c["status_code"].append(STATUS_CODES.get(span.status.code, str(span.status.code)))
        c["status_message"].append(span.status.message or None)
        c["attributes"].append(dynamic(span.attributes))
        c["events"].append(_events(span.events))
        c["links"].append(links)
    return columns.converted()


def _events(events: Any) -> bytes | None:
    if not events:
        return None
    return cbor2.dumps(
        [
            {
                "time_unix_nano": e.time_unix_nano,
                "name": e.name,
                "attributes": attributes(e.attributes),
            }
            for e in events
        ]
    )


def _links(links: Any) -> bytes | None:
    if not links:
        return None
    return cbor2.dumps(
        [
            {
                "trace_id": hex_id(link.trace_id, 16, "link trace_id"),
                "span_id": hex_id(link.span_id, 8, "link span_id"),
                "trace_state": link.trace_state,
                "attributes": attributes(link.attributes),
            }
            for link in links
        ]
    )
