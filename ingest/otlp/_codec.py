"""OTLP request bodies → messages: binary protobuf, and OTLP/JSON.

OTLP/JSON is protobuf's JSON mapping with two differences: trace and span ids are hex, not
base64, and enum values are integers. Unknown fields are ignored, as OTLP requires.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from kyma.engine.errors import IngestError

ID_FIELDS = frozenset(
    {"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"}
)


def decode_protobuf(message_type: type[Any], body: bytes) -> Any:
    try:
        return message_type.FromString(body)
    except DecodeError as e:
        raise IngestError(f"the body is not a valid {message_type.__name__}: {e}") from e


def decode_json(message_type: type[Any], body: bytes) -> Any:
    try:
        document = orjson.loads(body)
        message = message_type()
        json_format.ParseDict(_base64_ids(document), message, ignore_unknown_fields=True)
    except (orjson.JSONDecodeError, json_format.ParseError, ValueError, TypeError) as e:
        raise IngestError(f"the body is not a valid OTLP/JSON {message_type.__name__}: {e}") from e
    return message


def encode_json(message: Any) -> bytes:
    return json_format.MessageToJson(message, indent=None).encode()


def _base64_ids(value: Any) -> Any:
    """``value`` with every trace/span id turned from hex into the base64 protobuf expects."""
    if isinstance(value, list):
        return [_base64_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    fixed = {}
    for key, item in value.items():
        if key in ID_FIELDS and isinstance(item, str):
            try:
                item = base64.b64encode(bytes.fromhex(item)).decode()
            except ValueError:
                raise ValueError(f"{key} {item!r} is not hex") from None
        fixed[key] = _base64_ids(item)
    return fixed
