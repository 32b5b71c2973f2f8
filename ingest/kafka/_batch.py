"""A polled round of Kafka messages as one NDJSON body, the columns that say where each row
came from, which message each line belongs to (to dead-letter the one a line error points
at), and where each partition is read to after it.

The client hands over one Python object per message (confluent-kafka has no call returning
a round's payloads as one buffer): that object, and the C-level calls reading its value,
topic, partition and offset (``engine/native/kafka_messages``, one loop copying the values
into the body), are the per-message floor; the rest is Arrow and numpy. A round is read one
``consume`` call at a time, so no message object outlives the call that returned it: kept
for a whole round, hundreds of thousands of them would be traversed again and again by
Python's garbage collector (they are tracked objects) -- that alone doubled ``consume``'s cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kyma.engine.native.kafka_messages import gather

NEWLINE = 0x0A


@dataclass
class Origins:
    """Topic, partition and offset of each message of a round."""

    topics: list[str]  # the distinct topics
    topic_codes: np.ndarray  # int32: each message's index into ``topics``
    partitions: np.ndarray  # int32
    offsets: np.ndarray  # int64

    def of(self, message: int) -> tuple[str, int, int]:
        """Topic, partition and offset of the ``message``-th message."""
        topic = self.topics[self.topic_codes[message]]
        return topic, int(self.partitions[message]), int(self.offsets[message])

    def columns(self, owners: np.ndarray | None) -> dict[str, pa.Array]:
        """The ``_kafka_*`` columns: one value per message, or per entry of ``owners``."""
        codes, partitions, offsets = self.topic_codes, self.partitions, self.offsets
        if owners is not None:
            codes, partitions, offsets = codes[owners], partitions[owners], offsets[owners]
        return {
            "_kafka_topic": pa.array(self.topics, pa.string()).take(codes),
            "_kafka_partition": pa.array(partitions, pa.int32()),
            "_kafka_offset": pa.array(offsets, pa.int64()),
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
    """A round's NDJSON lines, their ``_kafka_*`` columns, and the message of each line."""

    ndjson: bytes
    columns: dict[str, pa.Array]
    owners: np.ndarray | None  # line i (from 0) came from message owners[i]; None: message i
    raw: dict[int, bytes]  # the values of the messages that are not one line as they are

    def owner(self, line: int) -> int:
        """The message that line ``line`` (from 1) came from."""
        return line - 1 if self.owners is None else int(self.owners[line - 1])

    def value(self, message: int) -> bytes:
        """The value of message ``message`` (one with a line)."""
        if message in self.raw:
            return self.raw[message]
        line = message if self.owners is None else int(np.flatnonzero(self.owners == message)[0])
        start, end = self._span(line, line)
        return self.ndjson[start:end].rstrip(b"\n")

    def without(self, message: int) -> Body:
        """The body less message ``message``'s lines (which follow one another)."""
        owners = np.arange(self._lines()) if self.owners is None else self.owners
        keep = owners != message
        dropped = np.flatnonzero(~keep)
        if not len(dropped):
            return self
        start, end = self._span(int(dropped[0]), int(dropped[-1]))
        ndjson = self.ndjson[:start] + self.ndjson[end:]
        if end == len(self.ndjson) and start:
            ndjson = ndjson[:-1]  # the last lines went: so does the newline before them
        columns = {name: values.filter(pa.array(keep)) for name, values in self.columns.items()}
        return Body(ndjson, columns, owners[keep], self.raw)

    def _lines(self) -> int:
        return self.ndjson.count(b"\n") + 1 if self.ndjson else 0

    def _span(self, first: int, last: int) -> tuple[int, int]:
        """Byte range of lines ``first`` to ``last``, with the newline after the last."""
        breaks = np.flatnonzero(np.frombuffer(self.ndjson, np.uint8) == NEWLINE)
        start = 0 if first == 0 else int(breaks[first - 1]) + 1
        end = int(breaks[last]) + 1 if last < len(breaks) else len(self.ndjson)
        return start, end


@dataclass
class _Piece:
    """One ``consume`` call's messages, read: their lines (the message of each, from 0, when
    not one line each), the values of those that are not one line as they are, origins."""

    count: int
    ndjson: bytes
    owners: np.ndarray | None
    raw: dict[int, bytes]
    codes: np.ndarray
    partitions: np.ndarray
    offsets: np.ndarray


class RoundReader:
    """A round being polled, read one ``consume`` call's messages at a time."""

    def __init__(self, metadata: bool) -> None:
        self.metadata = metadata  # the lines get their messages' ``_kafka_*`` columns
        self.rows = 0  # messages read
        self.size = 0  # ... and their values' bytes
        self._topics: list[str] = []
        self._pieces: list[_Piece] = []

    def add(self, messages: list[Any]) -> None:
        """Read ``messages`` (each without an error): one line per JSON document, as a message
        may hold several (NDJSON) or none (a tombstone)."""
        if not messages:
            return
        joined, codes, partitions, offsets = gather(messages, self._topics)
        if joined is not None:  # the common case: every message one JSON object on one line
            self.size += len(joined) - len(messages) + 1
            piece = _Piece(len(messages), joined, None, {}, codes, partitions, offsets)
        else:
            ndjson, owners, raw = self._lines(messages)
            piece = _Piece(len(messages), ndjson, owners, raw, codes, partitions, offsets)
        self._pieces.append(piece)
        self.rows += len(messages)

    def finish(self, parts: int = 1) -> list[tuple[Body, Origins]]:
        """The round as up to ``parts`` batches of about as many messages, in the order read:
        each one's body and its messages' origins."""
        if not self.rows:
            empty = np.empty(0, np.int32)
            return [(Body(b"", {}, None, {}), Origins([], empty, empty, np.empty(0, np.int64)))]
        groups: list[list[_Piece]] = [[]]
        read = 0
        for piece in self._pieces:
            if groups[-1] and read >= self.rows * len(groups) / parts:
                groups.append([])
            groups[-1].append(piece)
            read += piece.count
        return [self._batch(group) for group in groups]

    def _batch(self, pieces: list[_Piece]) -> tuple[Body, Origins]:
        origins = Origins(
            self._topics,
            np.concatenate([p.codes for p in pieces]),
            np.concatenate([p.partitions for p in pieces]),
            np.concatenate([p.offsets for p in pieces]),
        )
        owners = None
        raw: dict[int, bytes] = {}
        if any(p.owners is not None for p in pieces):
            each, start = [], 0
            for p in pieces:
                each.append(start + (np.arange(p.count) if p.owners is None else p.owners))
                raw.update((start + k, v) for k, v in p.raw.items())
                start += p.count
            owners = np.concatenate(each)
        columns = origins.columns(owners) if self.metadata else {}
        ndjson = b"\n".join(p.ndjson for p in pieces if p.ndjson)
        return Body(ndjson, columns, owners, raw), origins

    def _lines(self, messages: list[Any]) -> tuple[bytes, np.ndarray, dict[int, bytes]]:
        lines: list[bytes] = []
        owners: list[int] = []
        raw: dict[int, bytes] = {}
        for index, message in enumerate(messages):
            value = message.value() or b""
            self.size += len(value)
            if b"\n" not in value:  # one line, or a tombstone
                if value.strip():
                    lines.append(value)
                    owners.append(index)
                continue
            raw[index] = value
            for line in value.splitlines():
                if line.strip():
                    lines.append(line)
                    owners.append(index)
        return b"\n".join(lines), np.array(owners, np.int64), raw


def read_round(messages: list[Any], metadata: bool) -> tuple[Body, Origins]:
    """The body of ``messages`` (each without an error) and their origins."""
    reader = RoundReader(metadata)
    reader.add(messages)
    return reader.finish()[0]
