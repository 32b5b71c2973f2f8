"""``ExportTraceServiceRequest`` → rows of the traces table (``SPAN_COLUMNS``)."""

from __future__ import annotations

from typing import Any

import cbor2
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from ._values import Columns, Rejected, attributes, dynamic, hex_id, nanos

KINDS = {number: name.removeprefix("SPAN_KIND_") for name, number in Span.SpanKind.items()}
STATUS_CODES = {
    number: name.removeprefix("STATUS_CODE_") for name, number in Status.StatusCode.items()
}


def fill_spans(columns: Columns, request: Any) -> None:
    """One row per span of ``request``; a span with a malformed id or time is rejected."""
    c = columns.lists
    # Bound appends: a span is a dozen of them, the commonest step of the loop.
    start_at, end_at, duration = (
        c["_timestamp"].append,
        c["end_timestamp"].append,
        c["duration_ns"].append,
    )
    trace_ids, span_ids, parents = (
        c["trace_id"].append,
        c["span_id"].append,
        c["parent_span_id"].append,
    )
    states, names, kinds = c["trace_state"].append, c["name"].append, c["kind"].append
    codes, messages = c["status_code"].append, c["status_message"].append
    attrs, events, links = c["attributes"].append, c["events"].append, c["links"].append
    for span in columns.walk(request.resource_spans, "scope_spans", "spans"):
        try:
            trace_id = hex_id(span.trace_id, 16, "trace_id")
            span_id = hex_id(span.span_id, 8, "span_id")
            parent_span_id = hex_id(span.parent_span_id, 8, "parent_span_id")
            start = nanos(span.start_time_unix_nano, "start_time_unix_nano")
            end = nanos(span.end_time_unix_nano, "end_time_unix_nano")
            span_links = _links(span.links) if span.links else None
        except Rejected as e:
            columns.reject("span", e)
            continue
        start_at(start)
        end_at(end)
        duration(end - start if start and end else None)
        trace_ids(trace_id)
        span_ids(span_id)
        parents(parent_span_id)
        states(span.trace_state or None)
        names(span.name)
        kinds(KINDS.get(span.kind) or str(span.kind))
        status = span.status
        codes(STATUS_CODES.get(status.code) or str(status.code))
        messages(status.message or None)
        attrs(dynamic(span.attributes))
        events(_events(span.events) if span.events else None)
        links(span_links)


def _events(events: Any) -> bytes:
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


def _links(links: Any) -> bytes:
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
