"""A decoder for PostgreSQL's ``pgoutput`` logical replication messages (protocol 1 and 2).

Pure: bytes in, dataclasses out, no I/O. Protocol 2 adds streamed (in-progress) transactions:
between Stream Start and Stream Stop every data message carries its transaction id first.
Column values arrive as text (``'t'``), binary (``'b'``), NULL, or ``UNCHANGED`` for a
TOASTed value an UPDATE did not touch.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from kyma.engine.errors import FormatError

PG_EPOCH_US: Final = 946_684_800_000_000  # 2000-01-01 in µs since the Unix epoch


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"

    def __reduce__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Final = _Unchanged()
"""An unchanged TOASTed value: the row's current value, which the message does not carry."""

Value = str | bytes | None | _Unchanged


@dataclass(frozen=True)
class Begin:
    final_lsn: int
    commit_ts_us: int  # µs since the Unix epoch
    xid: int


@dataclass(frozen=True)
class Commit:
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts_us: int


@dataclass(frozen=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True)
class RelationColumn:
    key: bool
    name: str
    type_oid: int
    typmod: int


@dataclass(frozen=True)
class Relation:
    relid: int
    namespace: str
    name: str
    replica_identity: str
    columns: tuple[RelationColumn, ...]
    xid: int | None = None

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.key)


@dataclass(frozen=True)
class Type:
    oid: int
    namespace: str
    name: str
    xid: int | None = None


@dataclass(frozen=True)
class Insert:
    relid: int
    new: tuple[Value, ...]
    xid: int | None = None


@dataclass(frozen=True)
class Update:
    relid: int
    new: tuple[Value, ...]
    old: tuple[Value, ...] | None = None  # the old key ('K') or whole old row ('O')
    old_kind: str | None = None
    xid: int | None = None


@dataclass(frozen=True)
class Delete:
    relid: int
    old: tuple[Value, ...]
    old_kind: str
    xid: int | None = None


@dataclass(frozen=True)
class Truncate:
    relids: tuple[int, ...]
    cascade: bool
    restart_identity: bool
    xid: int | None = None


@dataclass(frozen=True)
class Message:
    transactional: bool
    lsn: int
    prefix: str
    content: bytes
    xid: int | None = None


@dataclass(frozen=True)
class StreamStart:
    xid: int
    first_segment: bool


@dataclass(frozen=True)
class StreamStop:
    pass


@dataclass(frozen=True)
class StreamCommit:
    xid: int
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts_us: int


@dataclass(frozen=True)
class StreamAbort:
    xid: int
    subxid: int


Decoded = (
    Begin
    | Commit
    | Origin
    | Relation
    | Type
    | Insert
    | Update
    | Delete
    | Truncate
    | Message
    | StreamStart
    | StreamStop
    | StreamCommit
    | StreamAbort
)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise FormatError(
                f"pgoutput message {self.data[:1]!r}: {n} bytes wanted at offset {self.pos},"
                f" only {len(self.data) - self.pos} left"
            )
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def int8(self) -> int:
        return self.take(1)[0]

    def int16(self) -> int:
        return int(struct.unpack(">h", self.take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self.take(4))[0])

    def uint32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def int64(self) -> int:
        return int(struct.unpack(">q", self.take(8))[0])

    def lsn(self) -> int:
        return int(struct.unpack(">Q", self.take(8))[0])

    def timestamp(self) -> int:
        return self.int64() + PG_EPOCH_US

    def string(self) -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise FormatError(f"pgoutput message {self.data[:1]!r}: unterminated string")
        text = self.data[self.pos : end].decode()
        self.pos = end + 1
        return text

    def tuple_data(self) -> tuple[Value, ...]:
        values: list[Value] = []
        for _ in range(self.int16()):
            kind = self.take(1)
            if kind == b"n":
                values.append(None)
            elif kind == b"u":
                values.append(UNCHANGED)
            elif kind == b"t":
                values.append(self.take(self.int32()).decode())
            elif kind == b"b":
                values.append(self.take(self.int32()))
            else:
                raise FormatError(f"pgoutput tuple: unknown column kind {kind!r}")
        return tuple(values)


class Decoder:
    """Decodes one message at a time; remembers whether it is inside a streamed block."""

    def __init__(self) -> None:
        self.in_stream = False

    def decode(self, data: bytes) -> Decoded:
        r = _Reader(bytes(data))
        tag = r.take(1)
        if tag == b"B":
            return Begin(r.lsn(), r.timestamp(), r.uint32())
        if tag == b"C":
            return Commit(r.int8(), r.lsn(), r.lsn(), r.timestamp())
        if tag == b"O":
            return Origin(r.lsn(), r.string())
        if tag == b"S":
            self.in_stream = True
            return StreamStart(r.uint32(), r.int8() == 1)
        if tag == b"E":
            self.in_stream = False
            return StreamStop()
        if tag == b"c":
            return StreamCommit(r.uint32(), r.int8(), r.lsn(), r.lsn(), r.timestamp())
        if tag == b"A":
            return StreamAbort(r.uint32(), r.uint32())
        xid = r.uint32() if self.in_stream else None
        if tag == b"R":
            relid, namespace, name = r.uint32(), r.string(), r.string()
            identity = chr(r.int8())
            columns = tuple(
                RelationColumn(r.int8() & 1 == 1, r.string(), r.uint32(), r.int32())
                for _ in range(r.int16())
            )
            return Relation(relid, namespace, name, identity, columns, xid)
        if tag == b"Y":
            return Type(r.uint32(), r.string(), r.string(), xid)
        if tag == b"I":
            relid = r.uint32()
            _expect(r, b"N", "Insert")
            return Insert(relid, r.tuple_data(), xid)
        if tag == b"U":
            relid = r.uint32()
            kind = r.take(1)
            old, old_kind = None, None
            if kind in (b"K", b"O"):
                old, old_kind = r.tuple_data(), kind.decode()
                kind = r.take(1)
            if kind != b"N":
                raise FormatError(f"pgoutput Update: expected 'N', got {kind!r}")
            return Update(relid, r.tuple_data(), old, old_kind, xid)
        if tag == b"D":
            relid = r.uint32()
            kind = r.take(1)
            if kind not in (b"K", b"O"):
                raise FormatError(f"pgoutput Delete: expected 'K' or 'O', got {kind!r}")
            return Delete(relid, r.tuple_data(), kind.decode(), xid)
        if tag == b"T":
            count, options = r.int32(), r.int8()
            relids = tuple(r.uint32() for _ in range(count))
            return Truncate(relids, bool(options & 1), bool(options & 2), xid)
        if tag == b"M":
            flags, lsn, prefix = r.int8(), r.lsn(), r.string()
            return Message(flags & 1 == 1, lsn, prefix, r.take(r.int32()), xid)
        raise FormatError(f"pgoutput: unknown message type {tag!r}")


def _expect(r: _Reader, tag: bytes, where: str) -> None:
    got = r.take(1)
    if got != tag:
        raise FormatError(f"pgoutput {where}: expected {tag!r}, got {got!r}")


def decode(data: bytes) -> Decoded:
    """One message outside any streamed block.

    >>> decode(bytes.fromhex("42" "0000000001928228" "0000000000000000" "000002da"))
    Begin(final_lsn=26378792, commit_ts_us=946684800000000, xid=730)
    """
    return Decoder().decode(data)
