"""A polled round of Kafka messages as one NDJSON body, the columns that say where each row
came from, which message each line belongs to (to dead-letter the one a line error points
at), and where each partition is read to after it.

The client hands over one Python object per message (confluent-kafka has no call returning
a round's payloads as one buffer): that object, and the C-level calls reading its value,
topic, partition and offset (``engine/native/kafka_messages``, one loop copying the values
into the body), are the per-message floor; the rest is Arrow and numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kyma.engine.native.kafka_messages import gather


@dataclass
class Origins:
    """Topic, partition and offset of each message of a round."""

    topics: list[str]  # the distinct topics
    topic_codes: np.ndarray  # int32: each message's index into ``topics``
    partitions: np.ndarray  # int32
    offsets: np.ndarray  # int64

    def take(self, indices: np.ndarray) -> Origins:
        return Origins(
            self.topics,
            self.topic_codes[indices],
            self.partitions[indices],
            self.offsets[indices],
        )

    def columns(self) -> dict[str, pa.Array]:
        """The ``_kafka_*`` columns, one value per message."""
        return {
            "_kafka_topic": pa.array(self.topics, pa.string()).take(self.topic_codes),
            "_kafka_partition": pa.array(self.partitions, pa.int32()),
            "_kafka_offset": pa.array(self.offsets, pa.int64()),
        }

    def next_positions(self) -> dict[tuple[str, int], int]:
        """Per (topic, partition): the offset after the round's last message."""
        if not len(self.offsets):
            return {}
        low, high = self.partitions.min(), self.partitions.max()
        if len(self.topics) == 1 and low == high:  # one partition
            return {(self.topics[0], int(low)): int(self.offsets.max()) + 1}
        keys = (self.topic_codes.astype(np.int64) << 32) | self.partitions.astype(np.int64)
        ends = pa.table({"k": keys, "o": self.offsets}).group_by("k").aggregate([("o", "max")])
        return {
            (self.topics[k >> 32], k & 0xFFFFFFFF): o + 1
            for k, o in zip(ends["k"].to_pylist(), ends["o_max"].to_pylist(), strict=True)
        }


@dataclass
class Body:
    ndjson: bytes
    columns: dict[str, pa.Array]
    owners: np.ndarray | None  # line i came from messages[owners[i]]; None: from messages[i]

    def owner(self, line: int) -> int:
        """The index of the message that line ``line`` (from 1) came from."""
        return line - 1 if self.owners is None else int(self.owners[line - 1])


def read_round(messages: list[Any], metadata: bool) -> tuple[Body, Origins]:
    """The body of ``messages`` (each without an error) and their origins: one line per JSON
    document, as a message may hold several (NDJSON) or none (a tombstone). With
    ``metadata``, each line gets its message's ``_kafka_*`` columns."""
    if not messages:
        empty = np.empty(0, np.int32)
        return Body(b"", {}, None), Origins([], empty, empty, np.empty(0, np.int64))
    joined, topics, codes, partitions, offsets = gather(messages)
    origins = Origins(topics, codes, partitions, offsets)
    if joined is not None:  # the common case: every message one JSON object on one line
        return Body(joined, origins.columns() if metadata else {}, None), origins
    lines: list[bytes] = []
    owners: list[int] = []
    for index, message in enumerate(messages):
        value = message.value() or b""
        if b"\n" not in value:  # one line, or a tombstone
            if value.strip():
                lines.append(value)
                owners.append(index)
            continue
        for line in value.splitlines():
            if line.strip():
                lines.append(line)
                owners.append(index)
    chosen = np.array(owners, np.int64)
    columns = origins.take(chosen).columns() if metadata else {}
    return Body(b"\n".join(lines), columns, chosen), origins
