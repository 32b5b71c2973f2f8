"""OTLP metrics' protobuf values → the Python values kyma columns store, and per-column lists
→ Arrow.

Metric data points are walked in Python (spans and log records are decoded from the wire by
the compiled ``_wire`` decoder); the converter appends each point's values to one Python list
per column and calls ``pa.array`` once per column at the end.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import cbor2
import orjson
import pyarrow as pa

from kyma.engine.types import Column, arrow_schema

MAX_NANOS = 2**63 - 1  # the latest instant a timestamp column holds (2262-04-11)


class Rejected(Exception):
    """One record the tables cannot take; the message says why."""


def any_value(value: Any) -> Any:
    """An ``AnyValue`` as a JSON-shaped Python value (bytes as base64, as OTLP/JSON has it)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def attributes(pairs: Any) -> dict[str, Any]:
    """Repeated ``KeyValue`` → a dict (a repeated key keeps its last value).

    Strings, the commonest values, are read without a call; other scalars with one getattr.
    """
    found: dict[str, Any] = {}
    for kv in pairs:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "string_value":
            found[kv.key] = value.string_value
        elif kind in _SCALARS:
            found[kv.key] = getattr(value, kind)
        else:
            found[kv.key] = any_value(value)
    return found


_SCALARS = frozenset({"int_value", "bool_value", "double_value"})


def dynamic(pairs: Any) -> bytes | None:
    """Repeated ``KeyValue`` → the CBOR a ``dynamic`` column stores; None when there are none."""
    return cbor2.dumps(attributes(pairs)) if pairs else None


def text(value: Any) -> str | None:
    """An ``AnyValue`` as a string column's value: strings as they are, others as JSON text."""
    if value.WhichOneof("value") == "string_value":
        return value.string_value
    plain = any_value(value)
    return None if plain is None else orjson.dumps(plain).decode()


def nanos(value: int, field: str) -> int | None:
    """Epoch nanoseconds as a timestamp value; 0 (unset) is None."""
    if value > MAX_NANOS:
        raise Rejected(f"{field} {value} is past the latest timestamp kyma stores")
    return value or None


@dataclass(frozen=True)
class Context:
    """The resource and scope a record came with, as the values of their columns."""

    service_name: str | None
    resource_attributes: bytes | None
    scope_name: str | None
    scope_version: str | None
    scope_attributes: bytes | None

    @classmethod
    def of(cls, resource: Any, scope: Any) -> Context:
        service = next((kv.value for kv in resource.attributes if kv.key == "service.name"), None)
        return cls(
            service_name=None if service is None else text(service),
            resource_attributes=dynamic(resource.attributes),
            scope_name=scope.name or None,
            scope_version=scope.version or None,
            scope_attributes=dynamic(scope.attributes),
        )


@dataclass(frozen=True)
class Outcome:
    """What an export request's answer says: how many of its records were left out, and why
    the first one was."""

    rejected: int = 0
    error_message: str = ""


class Columns:
    """One Python list per column, filled point by point from one or more export requests
    (``start`` before each), then one Arrow batch."""

    def __init__(self, columns: tuple[Column, ...]) -> None:
        self.schema = arrow_schema(columns)
        self.lists: dict[str, list[Any]] = {name: [] for name in self.schema.names}
        self.start()

    def start(self) -> None:
        """Begin the next request: its records are counted and rejected on their own."""
        self.seen = 0
        self.rejected = 0
        self.first_rejection = ""

    def reject(self, what: str, reason: Rejected) -> None:
        """Leave the current record out; the first reason becomes the partial-success message."""
        self.rejected += 1
        if not self.first_rejection:
            self.first_rejection = f"{what} {self.seen}: {reason}"

    def add_row(self, row: dict[str, Any]) -> None:
        """One record given as a dict; the columns it does not name are null."""
        for name, values in self.lists.items():
            values.append(row.get(name))

    def outcome(self) -> Outcome:
        """The current request's outcome."""
        return Outcome(self.rejected, self.first_rejection)

    def batch(self) -> pa.RecordBatch:
        """Every kept record of every request, in order (ArrowInvalid or OverflowError when
        a value does not fit its column)."""
        arrays = [pa.array(self.lists[f.name], f.type) for f in self.schema]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)
