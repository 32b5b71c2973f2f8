"""Kafka messages as one NDJSON body, the columns that say where each row came from, and
which message each line belongs to (to dead-letter the one a line error points at); a
polled round split by partition, so that its parts can be written at once.

The client hands over one Python object per message (confluent-kafka has no batch of
payloads as one buffer): that object, and one C-level call per field read from it
(``map`` over the method, no Python loop), is the per-message floor; the rest is Arrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass
class Origins:
    """Topic, partition and offset of each message of a batch, as Arrow columns."""

    topics: pa.Array
    partitions: pa.Array
    offsets: pa.Array

    @classmethod
    def of(cls, messages: Sequence[Any]) -> Origins:
        if not messages:
            return cls(
                pa.array([], pa.string()), pa.array([], pa.int32()), pa.array([], pa.int64())
            )
        kind = type(messages[0])  # calls through the class: a C loop, no bytecode per message
        return cls(
            pa.array(list(map(kind.topic, messages)), pa.string()),
            pa.array(list(map(kind.partition, messages)), pa.int32()),
            pa.array(list(map(kind.offset, messages)), pa.int64()),
        )

    def take(self, indices: pa.Array) -> Origins:
        return Origins(
            self.topics.take(indices), self.partitions.take(indices), self.offsets.take(indices)
        )

    def next_positions(self) -> dict[tuple[str, int], int]:
        """Per (topic, partition): the offset after the batch's last message."""
        if not len(self.offsets):
            return {}
        partitions = pc.min_max(self.partitions).as_py()
        if partitions["min"] == partitions["max"] and pc.count_distinct(self.topics).as_py() == 1:
            last = pc.max(self.offsets).as_py()  # one partition: the common case after split
            return {(self.topics[0].as_py(), partitions["min"]): last + 1}
        table = pa.table({"t": self.topics, "p": self.partitions, "o": self.offsets})
        ends = table.group_by(["t", "p"]).aggregate([("o", "max")])
        return {
            (t, p): o + 1
            for t, p, o in zip(
                ends["t"].to_pylist(), ends["p"].to_pylist(), ends["o_max"].to_pylist(), strict=True
            )
        }


@dataclass
class Body:
    ndjson: bytes
    columns: dict[str, pa.Array]
    owners: list[int]  # line i of ndjson came from messages[owners[i]]


def build_body(messages: Sequence[Any], origins: Origins | None) -> Body:
    """One line per JSON document: a message may hold several (NDJSON) or none (a tombstone).

    With ``origins`` (those of ``messages``), each line gets its message's ``_kafka_*`` columns.
    """
    values = list(map(type(messages[0]).value, messages)) if messages else []
    joined = _one_line(values)
    if joined is not None:  # the common case, checked in bulk
        return Body(joined, _origin_columns(origins), list(range(len(values))))
    lines: list[bytes] = []
    owners: list[int] = []
    one_each = True  # every message is exactly one line, in order
    for index, message in enumerate(messages):
        value = message.value() or b""
        if b"\n" not in value and value.strip():  # the common case
            lines.append(value)
            owners.append(index)
            continue
        one_each = False
        for line in value.splitlines():
            if line.strip():
                lines.append(line)
                owners.append(index)
    if origins is not None and not one_each:
        origins = origins.take(pa.array(owners, pa.int64()))
    return Body(b"\n".join(lines), _origin_columns(origins), owners)


def _one_line(values: list[bytes | None]) -> bytes | None:
    """The values joined by newlines when each is one JSON object on one line (none is a
    tombstone, each starts with ``{`` and holds no newline), else None: byte counts over
    the joined buffer, no Python per message."""
    if not values or None in values:
        return None
    joined = b"\n".join(values)  # type: ignore[arg-type]
    separators = len(values) - 1
    if joined.count(b"\n") != separators or joined.count(b"\n{") != separators:
        return None
    return joined if joined.startswith(b"{") else None


def _origin_columns(origins: Origins | None) -> dict[str, pa.Array]:
    if origins is None:
        return {}
    return {
        "_kafka_topic": origins.topics,
        "_kafka_partition": origins.partitions,
        "_kafka_offset": origins.offsets,
    }


def split(messages: Sequence[Any], origins: Origins, parts: int) -> list[tuple[list[Any], Origins]]:
    """The messages in up to ``parts`` parts by partition: each partition's messages all in
    one part, in their order; the parts in a fixed order of their partitions."""
    topics = origins.topics.dictionary_encode()
    keys = pc.add(
        pc.multiply(topics.indices.cast(pa.int64()), 1 << 32), origins.partitions.cast(pa.int64())
    )
    distinct = pc.unique(keys).sort()
    parts = min(parts, len(distinct))
    if parts <= 1:
        return [(list(messages), origins)]
    part_of_key = pa.array(np.arange(len(distinct)) % parts)
    part = part_of_key.take(pc.index_in(keys, value_set=distinct)).to_numpy()
    result = []
    for number in range(parts):
        chosen = np.flatnonzero(part == number)
        result.append(([messages[i] for i in chosen.tolist()], origins.take(pa.array(chosen))))
    return result
