"""The compiled decoder of spans and log records against an independent decode: protobuf's
own parser, then the documented mapping written out plainly below (``reference``). Requests
made by the OpenTelemetry SDK, requests that use every corner of the wire format, and
mutated bytes: the decoder refuses exactly what protobuf refuses, and otherwise gives the
same table, value for value and CBOR byte for byte."""

from __future__ import annotations

import base64
import random
import struct
from typing import Any

import cbor2
import grpc
import orjson
import pyarrow as pa
import pytest
from google.protobuf.message import DecodeError
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanContext, SpanKind, StatusCode

from kyma.engine.errors import IngestError
from kyma.engine.types import arrow_schema
from kyma.ingest.otlp._signals import SIGNALS
from kyma.ingest.otlp._tables import LOG_COLUMNS, SPAN_COLUMNS

TRACES, LOGS = SIGNALS["traces"], SIGNALS["logs"]
START = 1_767_225_600_000_000_000
LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


# ---- the reference: protobuf's parse, then the mapping of docs/guide/otlp.md -------------


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return as_dict(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def as_dict(pairs: Any) -> dict[str, Any]:
    return {kv.key: plain(kv.value) for kv in pairs}  # a repeated key: first place, last value


def dynamic(pairs: Any) -> bytes | None:
    return cbor2.dumps(as_dict(pairs)) if pairs else None


def text(value: AnyValue) -> str | None:
    if value.WhichOneof("value") == "string_value":
        return value.string_value
    found = plain(value)
    return None if found is None else orjson.dumps(found).decode()


class Bad(Exception):
    pass


def hex_id(raw: bytes, size: int, name: str) -> str | None:
    if raw and len(raw) != size:
        raise Bad(f"{name} must be {size} bytes, got {len(raw)}")
    return raw.hex() or None


def nanos(value: int, name: str) -> int | None:
    if value >= 2**63:
        raise Bad(f"{name} {value} is past the latest timestamp kyma stores")
    return value or None


def context(resource: Any, scope: Any) -> dict[str, Any]:
    service = next((kv.value for kv in resource.attributes if kv.key == "service.name"), None)
    return {
        "service_name": None if service is None else text(service),
        "resource_attributes": dynamic(resource.attributes),
        "scope_name": scope.name or None,
        "scope_version": scope.version or None,
        "scope_attributes": dynamic(scope.attributes),
    }


def span_row(span: Any) -> dict[str, Any]:
    ids = (
        hex_id(span.trace_id, 16, "trace_id"),
        hex_id(span.span_id, 8, "span_id"),
        hex_id(span.parent_span_id, 8, "parent_span_id"),
    )
    start = nanos(span.start_time_unix_nano, "start_time_unix_nano")
    end = nanos(span.end_time_unix_nano, "end_time_unix_nano")
    links = [
        {
            "trace_id": hex_id(link.trace_id, 16, "link trace_id"),
            "span_id": hex_id(link.span_id, 8, "link span_id"),
            "trace_state": link.trace_state,
            "attributes": as_dict(link.attributes),
        }
        for link in span.links
    ]
    events = [
        {"time_unix_nano": e.time_unix_nano, "name": e.name, "attributes": as_dict(e.attributes)}
        for e in span.events
    ]
    kind = Span.SpanKind.Name(span.kind) if span.kind in Span.SpanKind.values() else None
    code = span.status.code
    return {
        "_timestamp": start,
        "end_timestamp": end,
        "duration_ns": end - start if start and end else None,
        "trace_id": ids[0],
        "span_id": ids[1],
        "parent_span_id": ids[2],
        "trace_state": span.trace_state or None,
        "name": span.name,
        "kind": kind.removeprefix("SPAN_KIND_") if kind else str(span.kind),
        "status_code": Status.StatusCode.Name(code).removeprefix("STATUS_CODE_")
        if code in Status.StatusCode.values()
        else str(code),
        "status_message": span.status.message or None,
        "attributes": dynamic(span.attributes),
        "events": cbor2.dumps(events) if events else None,
        "links": cbor2.dumps(links) if links else None,
    }


def log_row(record: Any) -> dict[str, Any]:
    trace_id = hex_id(record.trace_id, 16, "trace_id")
    span_id = hex_id(record.span_id, 8, "span_id")
    time = nanos(record.time_unix_nano, "time_unix_nano")
    observed = nanos(record.observed_time_unix_nano, "observed_time_unix_nano")
    return {
        "_timestamp": time or observed,
        "observed_timestamp": observed,
        "severity_number": record.severity_number or None,
        "severity_text": record.severity_text or None,
        "body": text(record.body),
        "attributes": dynamic(record.attributes),
        "trace_id": trace_id,
        "span_id": span_id,
        "trace_flags": record.flags & 0xFF if trace_id else None,
        "event_name": record.event_name or None,
    }


def reference(signal: Any, body: bytes) -> tuple[pa.Table, int, str]:
    """The table, rejected count and first rejection of a request protobuf parses."""
    request = signal.request.FromString(body)
    traces = signal is TRACES
    rows, rejected, first, seen = [], 0, "", 0
    groups = request.resource_spans if traces else request.resource_logs
    for group in groups:
        for scoped in group.scope_spans if traces else group.scope_logs:
            shared = context(group.resource, scoped.scope)
            for item in scoped.spans if traces else scoped.log_records:
                seen += 1
                try:
                    rows.append({**(span_row(item) if traces else log_row(item)), **shared})
                except Bad as e:
                    rejected += 1
                    what = "span" if traces else "log record"
                    first = first or f"{what} {seen}: {e}"
    schema = arrow_schema(SPAN_COLUMNS if traces else LOG_COLUMNS)
    return pa.Table.from_pylist(rows, schema=schema), rejected, first


def assert_same(signal: Any, body: bytes) -> None:
    """The decoder and the reference agree on ``body``: both refuse it, or the same table."""
    try:
        expected = reference(signal, body)
    except DecodeError:
        with pytest.raises(IngestError, match=f"the body is not a valid {signal.request.__name__}"):
            signal.read(body)
        return
    decoded = signal.read(body)
    decoded.batch.validate(full=True)
    table, rejected, first = expected
    got = pa.Table.from_batches([decoded.batch])
    for name in table.column_names:
        assert got.column(name).equals(table.column(name)), name
    assert (decoded.outcome.rejected, decoded.outcome.error_message) == (rejected, first)


# ---- requests made by the SDK ------------------------------------------------------------

RESOURCE = Resource.create({"service.name": "shop", "host": "vm-1", "cores": 2, "ratio": 0.5})


def sdk_spans(count: int = 80) -> bytes:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("shop.http", "1.0", attributes={"tier": "web"})
    other = SpanContext(0xABC, 0xDEF, is_remote=True)
    for i in range(40):
        with tracer.start_as_current_span(
            f"GET /item/{i} ✓",
            kind=list(SpanKind)[i % 5],
            links=[Link(other, {"link.kind": "retry", "n": i})] if i % 3 == 0 else (),
            attributes={
                "http.method": ("GET", "POST")[i % 2],
                "http.status_code": 200 + i,
                "cached": i % 2 == 0,
                "ratio": i / 7,
                "tags": ["a", "b", str(i)],
                "weights": [1.5, -0.0, 1e300],
                "flags": [True, False],
                "counts": [i, -i, 2**62],
                "empty": "",
            },
        ) as span:
            span.add_event("cache miss", {"cache.key": f"item:{i}"})
            span.add_event("no attributes")
            if i % 4 == 1:
                span.set_status(StatusCode.ERROR, f"failed {i} ü")
            elif i % 4 == 2:
                span.set_status(StatusCode.OK)
            with tracer.start_as_current_span("child"):
                pass
    return encode_spans(list(exporter.get_finished_spans())[:count]).SerializeToString()


def sdk_logs(count: int = 40) -> bytes:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("shop.http", "2.1")
    bodies: list[Any] = ["plain ü", {"k": [1, 2.5, None, True]}, 42, 0.1, 1e-7, True, None, b"\x00"]
    for i in range(40):
        logger.emit(
            body=bodies[i % len(bodies)],
            severity_number=None if i % 5 == 0 else SeverityNumber(i % 25),
            severity_text=("INFO", "WARN", None)[i % 3],
            attributes={"user": f"u{i}", "attempt": i % 3, "cached": i % 5 == 0, "x": i / 3},
            event_name="login" if i % 6 == 0 else None,
            timestamp=None if i % 7 == 0 else START + i,
        )
    return encode_logs(list(exporter.get_finished_logs())[:count]).SerializeToString()


@pytest.fixture(scope="module")
def sdk_bodies() -> dict[str, bytes]:
    return {
        "traces": sdk_spans(),
        "logs": sdk_logs(),
        "a few spans": sdk_spans(4),
        "a few logs": sdk_logs(9),
    }


@pytest.mark.parametrize("name", ["traces", "logs"])
def test_sdk_requests_decode_as_protobuf_and_the_mapping_say(sdk_bodies, name: str) -> None:  # type: ignore[no-untyped-def]
    signal = SIGNALS[name]
    assert_same(signal, sdk_bodies[name])
    assert signal.read(sdk_bodies[name]).batch.num_rows == (80 if name == "traces" else 40)


# ---- every corner of the wire format -----------------------------------------------------


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def logs_with(*records: bytes, resource: bytes = b"", scope: bytes = b"") -> bytes:
    """An ExportLogsServiceRequest of one resource and scope holding ``records``."""
    scoped = (field(1, scope) if scope else b"") + b"".join(field(2, r) for r in records)
    group = (field(1, resource) if resource else b"") + field(2, scoped)
    return field(1, group)


def kv(key: str, value: bytes | None) -> bytes:
    return field(1, key.encode()) + (b"" if value is None else field(2, value))


def any_value(**kind: Any) -> bytes:
    return AnyValue(**kind).SerializeToString()


KVLIST = any_value(kvlist_value={"values": [KeyValue(key="a", value=AnyValue(int_value=1))]})
ARRAY = any_value(array_value={"values": [AnyValue(string_value="x")]})
CORNERS = {
    "a repeated key keeps its first place, its last value": field(
        6, kv("a", any_value(int_value=1))
    )
    + field(6, kv("b", any_value(bool_value=True)))
    + field(6, kv("a", any_value(string_value="last"))),
    "a key given twice in one KeyValue: the last": field(
        6, field(1, b"first") + kv("second", any_value(int_value=2))
    ),
    "a KeyValue without a value is null": field(6, kv("none", None)),
    "a value given twice is merged: the oneof's last": field(
        6, kv("v", any_value(string_value="s")) + field(2, any_value(double_value=2.5))
    ),
    "kvlists given twice in a row merge": field(
        6, kv("m", KVLIST) + field(2, any_value(kvlist_value={"values": [KeyValue(key="b")]}))
    ),
    "a value given twice, the first cut where the second would complete it": field(
        6,
        field(1, b"m")
        + field(2, field(6, bytes.fromhex("0a0c0a016112021801")))
        + field(2, field(6, bytes.fromhex("0a030a0162"))),
    ),
    "an array after a kvlist replaces it": field(6, kv("m", KVLIST + ARRAY)),
    "a kvlist, a string, a kvlist: only the last kvlist": field(
        6, kv("m", KVLIST + any_value(string_value="s") + KVLIST)
    ),
    "arrays merge": field(6, kv("m", ARRAY + ARRAY)),
    "strindex values are integers": field(6, kv("i", tag(8, 0) + varint(2**32 + 7))),
    "negative and huge integers": field(6, kv("n", tag(3, 0) + varint(2**64 - 5)))
    + field(6, kv("big", tag(3, 0) + varint(2**63))),
    "NaN, infinities and negative zero": b"".join(
        field(6, kv(str(i), tag(4, 1) + struct.pack("<d", v)))
        for i, v in enumerate([float("nan"), float("inf"), float("-inf"), -0.0, 5e-324])
    ),
    "bytes of every padding": b"".join(
        field(6, kv(str(n), any_value(bytes_value=bytes(range(n))))) for n in range(5)
    ),
    "a long map (hashed duplicate check) with a repeat": b"".join(
        field(6, kv(f"k{i % 90}", any_value(int_value=i))) for i in range(100)
    ),
    "a map of 24 and of 256 keys (longer CBOR heads)": field(
        6, kv("m", any_value(kvlist_value={"values": [KeyValue(key=str(i)) for i in range(24)]}))
    )
    + field(
        6, kv("w", any_value(kvlist_value={"values": [KeyValue(key=str(i)) for i in range(256)]}))
    ),
    "long strings": field(6, kv("s" * 300, any_value(string_value="x" * 70_000))),
    "a body given twice merges": field(5, any_value(int_value=1))
    + field(5, any_value(string_value="text")),
    "a body that is an array of everything": field(
        5,
        any_value(
            array_value={
                "values": [
                    AnyValue(double_value=1e16),
                    AnyValue(double_value=2.5e-5),
                    AnyValue(bytes_value=b"\xff"),
                    AnyValue(),
                    AnyValue(kvlist_value={"values": [KeyValue(key='q"\\\n')]}),
                ]
            }
        ),
    ),
    "an empty body is null, an empty string body is text": field(5, b""),
    "an explicitly empty string body": field(5, field(1, b"")),
    "a known field of the wrong wire type is skipped": tag(9, 0)
    + varint(5)
    + tag(1, 0)
    + varint(3)
    + tag(3, 0)
    + varint(1),
    "unknown fields of every wire type, and groups": tag(99, 0)
    + varint(1)
    + tag(98, 1)
    + b"\x00" * 8
    + tag(97, 5)
    + b"\x00" * 4
    + field(96, b"\xff\xfe")
    + tag(95, 3)
    + tag(1, 0)
    + varint(1)
    + tag(94, 3)
    + tag(94, 4)
    + tag(95, 4),
    "a message field sent as a group is skipped": tag(5, 3) + tag(5, 4),
    "ids of the wrong size are rejected": field(9, b"\x01" * 3),
    "times past 2262 are rejected": tag(11, 1) + struct.pack("<Q", 2**63),
    "times from 1970 and trace flags": tag(1, 1)
    + struct.pack("<Q", 1)
    + field(9, b"\x02" * 16)
    + tag(8, 5)
    + struct.pack("<I", 0x1FF),
    "enum values out of range": tag(2, 0) + varint(2**64 - 1),
}


@pytest.mark.parametrize("case", sorted(CORNERS))
def test_wire_corners_of_a_log_record(case: str) -> None:
    body = logs_with(CORNERS[case], b"", field(6, kv("after", any_value(int_value=9))))
    assert_same(LOGS, body)


RESOURCE_CORNERS = {  # a Resource's attributes (1) and an EntityRef (3)
    "service.name twice: the first": field(1, kv("service.name", any_value(string_value="a")))
    + field(1, kv("service.name", any_value(string_value="b"))),
    "a service.name that is not a string is JSON": field(
        1, kv("service.name", any_value(array_value={"values": [AnyValue(double_value=1e-7)]}))
    ),
    "a service.name without a value is null": field(1, kv("service.name", None)),
    "an entity ref": field(1, kv("x", None)) + field(3, field(2, b"host") + field(3, b"id")),
}


@pytest.mark.parametrize("case", sorted(RESOURCE_CORNERS))
def test_resource_corners(case: str) -> None:
    body = logs_with(field(6, kv("a", None)), resource=RESOURCE_CORNERS[case])
    assert_same(LOGS, body)


def test_resources_scopes_and_statuses_given_twice_merge() -> None:
    resource = field(1, kv("r1", any_value(int_value=1)))
    scope = field(1, b"lib") + field(3, kv("s", None))
    span = field(1, b"\x01" * 16) + field(5, b"op") + field(15, field(2, b"m") + tag(3, 0))
    span += varint(2) + field(15, tag(3, 0) + varint(1)) + field(13, field(1, b"\x02" * 16))
    scoped = field(1, scope) + field(2, span) + field(1, field(2, b"v2")) + field(3, b"url")
    group = field(1, resource) + field(2, scoped) + field(1, field(1, kv("r2", None)))
    assert_same(TRACES, field(1, group) + field(1, group))


def test_a_rejected_span_among_kept_ones() -> None:
    good = field(1, b"\x01" * 16) + field(2, b"\x02" * 8) + field(5, b"ok")
    bad_link = good + field(13, field(1, b"\x03" * 16) + field(2, b"\x04" * 7))
    late = good + tag(7, 1) + struct.pack("<Q", 2**64 - 1)
    scoped = b"".join(field(2, s) for s in [good, bad_link, good, late, good])
    assert_same(TRACES, field(1, field(2, scoped)))
    decoded = TRACES.read(field(1, field(2, scoped)))
    assert decoded.outcome.rejected == 2
    assert decoded.outcome.error_message == "span 2: link span_id must be 8 bytes, got 7"
    assert decoded.batch.num_rows == 3


# ---- malformed bytes -----------------------------------------------------------------------


def nested_arrays(depth: int) -> bytes:
    value = any_value(string_value="x")
    for _ in range(depth):
        value = field(5, field(1, value))
    return value


RECORD = field(6, kv("k", any_value(string_value="v"))) + field(5, any_value(string_value="b"))
MALFORMED = {
    "truncated inside a record": (
        logs_with(RECORD)[:-3],
        "a length-delimited field runs past the end of its message at byte 0",
    ),
    "a truncated varint": (logs_with(RECORD) + b"\x08\x80", "a varint runs past the end of its"),
    "wire type 7": (logs_with(RECORD) + tag(1, 7), "a field has wire type 6 or 7 at byte 21"),
    "wire type 6 inside a record": (
        logs_with(RECORD + tag(3, 6)),
        "a field has wire type 6 or 7 at byte 21",
    ),
    "field number 0": (logs_with(RECORD + b"\x00"), "a field number is out of range at byte 21"),
    "an end-group tag alone": (logs_with(tag(4, 4)), "an end-group tag has no start at byte 6"),
    "a group closed by another number": (
        logs_with(tag(4, 3) + tag(5, 4)),
        "an end-group tag does not match its group at byte 7",
    ),
    "bad UTF-8 in a key": (
        logs_with(field(6, field(1, b"\xc3("))),
        "a KeyValue's key is not UTF-8 at byte 8",
    ),
    "bad UTF-8 in a string value": (
        logs_with(field(6, kv("k", field(1, b"\xed\xa0\x80")))),
        "a string value is not UTF-8 at byte 13",
    ),
    "bad UTF-8 in an overridden kvlist": (
        logs_with(field(5, field(6, field(1, field(1, b"\xff"))) + field(1, b"s"))),
        "a KeyValue's key is not UTF-8",
    ),
    "bad UTF-8 in a schema_url": (
        logs_with(b"") + field(1, field(3, b"\x80")),
        "a schema_url is not UTF-8 at byte 8",
    ),
    "nesting past 100": (
        logs_with(field(5, nested_arrays(49))),
        "messages nest over 100 deep at byte 241",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_bytes_are_refused_precisely(case: str) -> None:
    body, message = MALFORMED[case]
    with pytest.raises(DecodeError):
        ExportLogsServiceRequest.FromString(body)  # protobuf refuses it too
    with pytest.raises(IngestError) as refused:
        LOGS.read(body)
    assert str(refused.value).startswith("the body is not a valid ExportLogsServiceRequest: ")
    assert message in str(refused.value)


LONG_VARINTS = {  # protobuf takes tags and lengths of at most 5 bytes, other varints of 10
    "a 5-byte tag": b"\x88\x80\x80\x80\x00\x01",
    "a 6-byte tag": b"\x88\x80\x80\x80\x80\x00\x01",
    "a 5-byte length": b"\x0a\x80\x80\x80\x80\x00",
    "a 6-byte length": b"\x0a\x80\x80\x80\x80\x80\x00",
    "a 10-byte varint": b"\x08" + b"\xff" * 9 + b"\x7f",
    "an 11-byte varint": b"\x08" + b"\xff" * 10 + b"\x01",
    "a group ended by a 5-byte tag": b"\x0b\x8c\x80\x80\x80\x00",
    "a group ended by a 6-byte tag": b"\x0b\x8c\x80\x80\x80\x80\x00",
    "a 6-byte length in a group": b"\x0b\x12\x80\x80\x80\x80\x80\x00\x0c",
}


@pytest.mark.parametrize("case", sorted(LONG_VARINTS))
def test_long_varints_are_taken_or_refused_as_protobuf_does(case: str) -> None:
    assert_same(LOGS, LONG_VARINTS[case])


def test_nesting_up_to_100_is_taken() -> None:
    assert_same(LOGS, logs_with(field(5, nested_arrays(48))))


def test_a_resource_too_large_for_its_rows_is_refused_whole() -> None:
    """A 300 kB resource attribute on 8 000 records: 2.4 GB of resource_attributes."""
    resource = field(1, kv("big", any_value(string_value="x" * 300_000)))
    with pytest.raises(IngestError, match="^the logs cannot be stored: a column's values are"):
        LOGS.read(logs_with(*[b""] * 8_000, resource=resource))


def test_mutated_sdk_bytes_are_refused_or_decoded_as_protobuf_does(sdk_bodies) -> None:  # type: ignore[no-untyped-def]
    """Truncations, flipped and inserted bytes, spliced slices of real requests (seeded)."""
    chance = random.Random(37)
    for name, signal in (("a few spans", TRACES), ("a few logs", LOGS)):
        original = sdk_bodies[name]
        for _ in range(200):
            body = bytearray(original)
            at = chance.randrange(len(body))
            move = chance.randrange(4)
            if move == 0:
                del body[at:]
            elif move == 1:
                body[at] ^= 1 << chance.randrange(8)
            elif move == 2:
                body.insert(at, chance.randrange(256))
            else:
                body[at:at] = body[chance.randrange(len(body)) :][: chance.randrange(1, 40)]
            assert_same(signal, bytes(body))


# ---- through the receiver: INVALID_ARGUMENT, nothing committed ---------------------------


def test_a_malformed_export_is_invalid_argument_and_commits_nothing(receiver, services) -> None:  # type: ignore[no-untyped-def]
    good = logs_with(RECORD)
    with grpc.insecure_channel(receiver.grpc_url.removeprefix("grpc://")) as channel:
        export = channel.unary_unary(
            LOGS_EXPORT, response_deserializer=ExportLogsServiceResponse.FromString
        )
        export(good, timeout=30)
        for body in (good[:-3], good + tag(1, 7), good + field(1, field(2, field(2, RECORD[:-1])))):
            with pytest.raises(grpc.RpcError) as failed:
                export(body, timeout=30)
            assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert failed.value.details().startswith(
                "the body is not a valid ExportLogsServiceRequest: "
            )
            assert " at byte " in failed.value.details()
    extents = services.catalog.live_extents("otel_logs")
    assert sum(e.row_count for e in extents) == 1
    assert len(services.catalog.snapshots("otel_logs")) == 1
