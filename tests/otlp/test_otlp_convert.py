"""Attribute maps and events encoded for a whole request by Arrow kernels are the bytes
``cbor2.dumps`` makes of the per-record dicts, whatever the values and keys."""

from __future__ import annotations

import cbor2
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from kyma.ingest.otlp._logs import logs_batch
from kyma.ingest.otlp._traces import spans_batch
from kyma.ingest.otlp._values import attributes, dynamic, text

KEYS = st.sampled_from(["a", "b", "http.method", "ü" * 30, "", "k" * 300])
SCALARS = st.one_of(
    st.builds(AnyValue),  # no value
    st.builds(AnyValue, string_value=st.text(max_size=40)),
    st.builds(AnyValue, int_value=st.integers(-(2**63), 2**63 - 1)),
    st.builds(AnyValue, double_value=st.floats()),
    st.builds(AnyValue, bool_value=st.booleans()),
    st.builds(AnyValue, bytes_value=st.binary(max_size=8)),
)


def _nested(children: st.SearchStrategy[AnyValue]) -> st.SearchStrategy[AnyValue]:
    def listed(values: list[AnyValue]) -> AnyValue:
        value = AnyValue()
        value.array_value.values.extend(values)
        return value

    def mapped(pairs: list[tuple[str, AnyValue]]) -> AnyValue:
        value = AnyValue()
        value.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in pairs)
        return value

    pairs = st.lists(st.tuples(KEYS, children), max_size=3)
    return st.one_of(st.lists(children, max_size=3).map(listed), pairs.map(mapped))


VALUES = st.recursive(SCALARS, _nested, max_leaves=6)
ATTRIBUTES = st.lists(st.tuples(KEYS, VALUES), max_size=6)  # keys may repeat


@given(st.lists(st.tuples(ATTRIBUTES, st.lists(ATTRIBUTES, max_size=3)), max_size=12))
def test_span_attributes_and_events_are_the_per_record_cbor(spans) -> None:  # type: ignore[no-untyped-def]
    request = ExportTraceServiceRequest()
    made = request.resource_spans.add().scope_spans.add().spans
    for i, (pairs, events) in enumerate(spans):
        span = made.add(name=f"s{i}")
        span.attributes.extend(KeyValue(key=k, value=v) for k, v in pairs)
        for j, event_pairs in enumerate(events):
            event = span.events.add(time_unix_nano=j * 2**40, name=f"e{j}")
            event.attributes.extend(KeyValue(key=k, value=v) for k, v in event_pairs)
    batch = spans_batch(request).batch
    assert batch.num_rows == len(spans)
    expected_events = [
        cbor2.dumps(
            [
                {
                    "time_unix_nano": e.time_unix_nano,
                    "name": e.name,
                    "attributes": attributes(e.attributes),
                }
                for e in span.events
            ]
        )
        if span.events
        else None
        for span in made
    ]
    assert batch.column("attributes").to_pylist() == [dynamic(s.attributes) for s in made]
    assert batch.column("events").to_pylist() == expected_events


@given(st.lists(st.tuples(ATTRIBUTES, VALUES), max_size=12))
def test_log_attributes_and_bodies_are_the_per_record_values(logs) -> None:  # type: ignore[no-untyped-def]
    request = ExportLogsServiceRequest()
    made = request.resource_logs.add().scope_logs.add().log_records
    for pairs, body in logs:
        record = made.add()
        record.attributes.extend(KeyValue(key=k, value=v) for k, v in pairs)
        record.body.CopyFrom(body)
    batch = logs_batch(request).batch
    assert batch.column("attributes").to_pylist() == [dynamic(r.attributes) for r in made]
    assert batch.column("body").to_pylist() == [text(r.body) for r in made]


def test_a_malformed_record_is_left_out_with_the_first_reason() -> None:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    spans.add(name="good", trace_id=b"t" * 16, span_id=b"s" * 8)
    spans.add(name="short", trace_id=b"t" * 16, span_id=b"s" * 3)
    spans.add(name="late", start_time_unix_nano=2**64 - 1, parent_span_id=b"p" * 8)
    spans.add(name="link").links.add(trace_id=b"t" * 5)
    spans.add(name="also good", parent_span_id=b"p" * 8)
    converted = spans_batch(request)
    assert converted.rejected == 3
    assert converted.error_message == "span 2: span_id must be 8 bytes, got 3"
    assert converted.batch.column("name").to_pylist() == ["good", "also good"]
    assert converted.batch.column("trace_id").to_pylist() == [(b"t" * 16).hex(), None]
    assert converted.batch.column("parent_span_id").to_pylist() == [None, (b"p" * 8).hex()]
