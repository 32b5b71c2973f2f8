"""Kafka messages as one NDJSON body, the columns that say where each row came from, and
which message each line belongs to (to dead-letter the one a line error points at); a
polled round split by partition, so that its parts can be written at once."""

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
        return cls(
            pa.array([m.topic() for m in messages], pa.string()),
            pa.array([m.partition() for m in messages], pa.int32()),
            pa.array([m.offset() for m in messages], pa.int64()),
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
    columns = {}
    if origins is not None:
        mine = origins if one_each else origins.take(pa.array(owners, pa.int64()))
        columns = {
            "_kafka_topic": mine.topics,
            "_kafka_partition": mine.partitions,
            "_kafka_offset": mine.offsets,
        }
    return Body(b"\n".join(lines), columns, owners)


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
