"""The dedicated NDJSON reader: one line at a time, every rule checked in Python.

Correct and complete on its own: it is the reference the fast path must match, and the
source of every IngestError, so messages never depend on which path read a body.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.errors import IngestError
from kyma.engine.format import ParsedDynamic
from kyma.engine.types import TIMESTAMP, Column, arrow_schema

from ._json import parse_line
from ._model import Coerced
from ._values import convert_rows, overflow_fields

JSON_WHITESPACE = " \t\r"
EMPTY = "empty body: no JSON objects"


def objects(body: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line; a leading UTF-8 BOM is ignored."""
    for number, raw in enumerate(body.split(b"\n"), 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            message = f"line {number}: invalid UTF-8 at byte {e.start} of the line"
            raise IngestError(message, number) from None
        if number == 1:
            text = text.removeprefix(codecs.BOM_UTF8.decode())
        if text.strip(JSON_WHITESPACE):
            yield number, parse_line(text, number)


def coerce_rows(
    body: bytes,
    columns: Sequence[Column],
    *,
    props_fields: Collection[str] = (),
    ingest_time_ns: int,
) -> Coerced:
    """Coerce a body in Python alone; same contract as ``coerce_ndjson``."""
    overflow = overflow_fields(columns, props_fields)
    keys: dict[str, None] = {}

    def noting_keys() -> Iterator[tuple[int, dict[str, Any]]]:
        for number, obj in objects(body):
            keys.update(dict.fromkeys(obj))
            yield number, obj

    values, rows = convert_rows(noting_keys(), columns, overflow)
    if not rows:
        raise IngestError(EMPTY)
    arrays = [pa.array(values[c.name], c.type.to_arrow()) for c in columns]
    known = {c.name for c in columns} | set(overflow)
    unknown = [k for k in keys if k not in known]
    return assemble(arrays, columns, rows, ingest_time_ns, unknown)


def assemble(
    arrays: list[pa.Array],
    columns: Sequence[Column],
    rows: int,
    ingest_time_ns: int,
    unknown_keys: list[str],
    parsed: dict[str, ParsedDynamic] | None = None,
) -> Coerced:
    """The batch of both paths: ``_timestamp`` nulls become the ingest time."""
    for i, column in enumerate(columns):
        if column.name == "_timestamp":
            arrays[i] = pc.fill_null(arrays[i], pa.scalar(ingest_time_ns, TIMESTAMP))
    batch = pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(tuple(columns)))
    return Coerced(batch, rows, unknown_keys, parsed=parsed or {})
