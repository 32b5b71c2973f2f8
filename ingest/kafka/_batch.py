"""Kafka messages as one NDJSON body, the columns that say where each row came from, and
which message each line belongs to (to dead-letter the one a line error points at)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa


@dataclass
class Body:
    ndjson: bytes
    columns: dict[str, pa.Array]
    owners: list[int]  # line i of ndjson came from messages[owners[i]]


def build_body(messages: Sequence[Any], *, metadata_columns: bool) -> Body:
    """One line per JSON document: a message may hold several (NDJSON) or none (a tombstone)."""
    lines: list[bytes] = []
    owners: list[int] = []
    for index, message in enumerate(messages):
        for line in (message.value() or b"").splitlines():
            if line.strip():
                lines.append(line)
                owners.append(index)
    columns = {}
    if metadata_columns:
        columns = {
            "_kafka_topic": pa.array([messages[i].topic() for i in owners], pa.string()),
            "_kafka_partition": pa.array([messages[i].partition() for i in owners], pa.int32()),
            "_kafka_offset": pa.array([messages[i].offset() for i in owners], pa.int64()),
        }
    return Body(b"\n".join(lines), columns, owners)


def next_positions(messages: Sequence[Any]) -> dict[tuple[str, int], int]:
    """Per (topic, partition): the offset after the last message of the batch."""
    ends: dict[tuple[str, int], int] = {}
    for message in messages:
        key = (message.topic(), message.partition())
        ends[key] = max(ends.get(key, 0), message.offset() + 1)
    return ends
