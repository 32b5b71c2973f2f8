"""``ExportTraceServiceRequest`` → rows of the traces table (``SPAN_COLUMNS``)."""

from __future__ import annotations

from typing import Any

import cbor2
import numpy as np
import pyarrow as pa
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from kyma.engine.types import arrow_schema

from ._cbor import arrays, attribute_maps, join, key, texts, uints
from ._records import Checked, blank_null, hex_ids, named, records, times, timestamps
from ._tables import SPAN_COLUMNS
from ._values import Converted, Rejected, attributes, hex_id, nanos

KINDS = {number: name.removeprefix("SPAN_KIND_") for name, number in Span.SpanKind.items()}
STATUS_CODES = {
    number: name.removeprefix("STATUS_CODE_") for name, number in Status.StatusCode.items()
}
SCHEMA = arrow_schema(SPAN_COLUMNS)
_EVENT = pa.scalar(b"\xa3" + key("time_unix_nano"), pa.binary())  # a map of 3 keys
_NAME = pa.scalar(key("name"), pa.binary())
_ATTRIBUTES = pa.scalar(key("attributes"), pa.binary())


def spans_batch(request: Any) -> Converted:
    """One row per span; a span with a malformed id, time or link is rejected."""
    spans, columns = records(request.resource_spans, "scope_spans", "spans")
    checked = Checked("span", spans)
    ids = {}
    for name, size in (("trace_id", 16), ("span_id", 8), ("parent_span_id", 8)):
        ids[name], bad = hex_ids([getattr(s, name) for s in spans], size)
        checked.check(bad, lambda s, name=name, size=size: hex_id(getattr(s, name), size, name))
    start, late = times([s.start_time_unix_nano for s in spans])
    checked.check(late, lambda s: nanos(s.start_time_unix_nano, "start_time_unix_nano"))
    end, late = times([s.end_time_unix_nano for s in spans])
    checked.check(late, lambda s: nanos(s.end_time_unix_nano, "end_time_unix_nano"))
    links, bad = _links([s.links for s in spans])
    checked.check(bad, lambda s: _link_list(s.links))
    statuses = [s.status for s in spans]
    both = (start != 0) & (end != 0)
    columns.update(
        ids,
        _timestamp=timestamps(start),
        end_timestamp=timestamps(end),
        duration_ns=pa.array(end - start, pa.int64(), mask=~both),
        trace_state=blank_null([s.trace_state for s in spans]),
        name=pa.array([s.name for s in spans], pa.string()),
        kind=named([s.kind for s in spans], KINDS),
        status_code=named([s.code for s in statuses], STATUS_CODES),
        status_message=blank_null([s.message for s in statuses]),
        attributes=attribute_maps([s.attributes for s in spans]),
        events=_events([s.events for s in spans]),
        links=links,
    )
    return checked.converted(SCHEMA, columns)


def _events(rows: list[Any]) -> pa.Array:
    """Each span's events as the CBOR of a list of ``{time_unix_nano, name, attributes}``."""
    counts = np.fromiter(map(len, rows), np.int64, len(rows))
    events = [e for row in rows for e in row]
    encoded = join(
        _EVENT,
        uints([e.time_unix_nano for e in events]),
        _NAME,
        texts(pa.array([e.name for e in events], pa.string())),
        _ATTRIBUTES,
        attribute_maps([e.attributes for e in events], empty_as_null=False),
    )
    return arrays(encoded, counts)


def _links(rows: list[Any]) -> tuple[pa.Array, np.ndarray]:
    """Each span's links as CBOR (few spans have any: one ``cbor2.dumps`` per span that
    does), and which spans have a link with a malformed id."""
    encoded: list[bytes | None] = [None] * len(rows)
    bad = np.zeros(len(rows), np.bool_)
    for i in np.flatnonzero(np.fromiter(map(len, rows), np.int64, len(rows))):
        try:
            encoded[i] = _link_list(rows[i])
        except Rejected:
            bad[i] = True
    return pa.array(encoded, pa.binary()), bad


def _link_list(links: Any) -> bytes:
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
