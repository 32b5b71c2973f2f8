"""Kafka messages as one NDJSON body, the columns that say where each row came from, and
which message each line belongs to (to dead-letter the one a line error points at)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa


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
