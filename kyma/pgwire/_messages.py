"""Postgres protocol v3 framing: read a client message, build a server message. No policy.

Every server message is a type byte, an int32 length counting itself, and a body
(https://www.postgresql.org/docs/current/protocol-message-formats.html).
"""

from __future__ import annotations

import builtins
import struct
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PROTOCOL_V3 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_MESSAGE_BYTES = 64 << 20  # a longer client message is a broken or hostile client
MAX_STARTUP_BYTES = 10_000  # the start-up packet and the password, as Postgres caps them


class ProtocolViolation(Exception):
    """The client sent bytes that are not the protocol: the connection is closed."""


def read_exact(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if data is None or len(data) < n:
        raise EOFError("the client closed the connection")
    return data


def read_startup(stream: BinaryIO) -> tuple[int, bytes]:
    """The first message: (request code, the rest of its body)."""
    (length,) = struct.unpack("!i", read_exact(stream, 4))
    if not 8 <= length <= MAX_STARTUP_BYTES:
        raise ProtocolViolation(f"invalid length of startup packet: {length} bytes")
    body = read_exact(stream, length - 4)
    (code,) = struct.unpack("!i", body[:4])
    return code, body[4:]


def startup_parameters(body: bytes) -> dict[str, str]:
    """``user``, ``database``, ``options``… of a StartupMessage body."""
    parts = body.split(b"\x00")
    names, values = parts[0:-1:2], parts[1::2]
    return {n.decode(): v.decode() for n, v in zip(names, values, strict=False) if n}


def read_message(stream: BinaryIO, limit: int = MAX_MESSAGE_BYTES) -> tuple[bytes, bytes]:
    """(type byte, body) of the next regular client message; ProtocolViolation, before
    reading the body, when its length passes ``limit``."""
    kind = read_exact(stream, 1)
    (length,) = struct.unpack("!i", read_exact(stream, 4))
    if not 4 <= length <= limit:
        raise ProtocolViolation(f"invalid message length: message {kind!r} of {length} bytes")
    return kind, read_exact(stream, length - 4)


class Reader:
    """Fields of one message body, in order."""

    def __init__(self, body: bytes) -> None:
        self.body, self.pos = body, 0

    def cstring(self) -> str:
        end = self.body.index(b"\x00", self.pos)
        text = self.body[self.pos : end].decode()
        self.pos = end + 1
        return text

    def int16(self) -> int:
        (value,) = struct.unpack_from("!h", self.body, self.pos)
        self.pos += 2
        return int(value)

    def int32(self) -> int:
        (value,) = struct.unpack_from("!i", self.body, self.pos)
        self.pos += 4
        return int(value)

    def bytes(self, n: int) -> bytes:
        data = self.body[self.pos : self.pos + n]
        self.pos += n
        return data

    def byte(self) -> builtins.bytes:
        return self.bytes(1)


def message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def cstring(text: str) -> bytes:
    return text.encode() + b"\x00"


def authentication(code: int) -> bytes:
    """0 ok, 3 cleartext password."""
    return message(b"R", struct.pack("!i", code))


def parameter_status(name: str, value: str) -> bytes:
    return message(b"S", cstring(name) + cstring(value))


def backend_key_data(pid: int, secret: int) -> bytes:
    return message(b"K", struct.pack("!ii", pid, secret))


def ready_for_query(status: bytes = b"I") -> bytes:
    return message(b"Z", status)


def command_complete(tag: str) -> bytes:
    return message(b"C", cstring(tag))


def error_response(sqlstate: str, text: str, severity: str = "ERROR", kind: bytes = b"E") -> bytes:
    """An ErrorResponse; ``kind`` ``b"N"``: a NoticeResponse (a WARNING, say)."""
    fields = b"S" + cstring(severity) + b"V" + cstring(severity)
    fields += b"C" + cstring(sqlstate) + b"M" + cstring(text)
    return message(kind, fields + b"\x00")


def row_description(columns: Sequence[tuple[str, int, int, int]]) -> bytes:
    """``columns``: (name, type OID, type size, format code: 0 text, 1 binary)."""
    body = struct.pack("!h", len(columns))
    for name, oid, size, code in columns:
        body += cstring(name) + struct.pack("!ihihih", 0, 0, oid, size, -1, code)
    return message(b"T", body)


def data_rows(columns: Sequence[pa.Array]) -> bytes:
    """The DataRow messages of whole columns (large_binary, null for NULL), built by numpy
    and Arrow kernels: each cell is its int32 length (-1: NULL) and bytes, each row a header
    and its cells, and the rows lie back to back in one buffer.

    The fixed-width parts of a row (the header, every length, the cells of a column whose
    values all have one width) are packed as numpy blocks; the values of other columns lie
    between them, and one Arrow ``binary_join_element_wise`` joins blocks and values row by row.

    >>> data_rows([pa.array([b"", b""], pa.large_binary())])[:10]
    b'D\\x00\\x00\\x00\\n\\x00\\x01\\x00\\x00\\x00'
    >>> data_rows([pa.array([b"1", None], pa.large_binary())])
    b'D\\x00\\x00\\x00\\x0b\\x00\\x01\\x00\\x00\\x00\\x011D\\x00\\x00\\x00\\n\\x00\\x01\\xff\\xff\\xff\\xff'
    """
    count = len(columns[0])
    columns = [_variable(column) for column in columns]
    cells = [_cells(column) for column in columns]
    header = np.empty(count, dtype=[("kind", "S1"), ("length", ">i4"), ("width", ">i2")])
    header["kind"], header["width"] = b"D", len(columns)
    header["length"] = 4 + 2 + sum(4 + np.maximum(lengths, 0) for lengths, _ in cells)
    parts = [header]  # the current block's fixed-width parts, one value a row each
    pieces: list[pa.Array] = []  # blocks and variable values, in row order
    for column, (lengths, values) in zip(columns, cells, strict=True):
        parts.append(lengths.astype(">i4"))
        width = _fixed_width(column, lengths)
        if width is not None:
            if width:  # every value empty (''): its length is the whole cell
                parts.append(values[: count * width].view(f"V{width}"))
            continue
        pieces.append(_block(parts, count))
        pieces.append(_values(column))
        parts = []
    if parts:
        pieces.append(_block(parts, count))
    if len(pieces) == 1:
        return _data(pieces[0])
    return _data(pc.binary_join_element_wise(*pieces, _EMPTY))


def copy_data(lines: pa.Array) -> bytes:
    """One CopyData message a value of ``lines`` (large_binary, no NULL), back to back.

    >>> copy_data(pa.array([b"1\\n", b"22\\n"], pa.large_binary()))
    b'd\\x00\\x00\\x00\\x061\\nd\\x00\\x00\\x00\\x0722\\n'
    """
    count = len(lines)
    lengths, _ = _cells(lines)
    header = np.empty(count, dtype=[("kind", "S1"), ("length", ">i4")])
    header["kind"], header["length"] = b"d", 4 + lengths
    order = (np.arange(count, dtype=np.int64)[:, None] + count * np.arange(2)).ravel()
    return _data(pa.concat_arrays([_block([header], count), lines]).take(pa.array(order)))


def _variable(column: pa.Array) -> pa.Array:
    """A fixed_size_binary column with NULLs as large_binary (the others are taken as is)."""
    if pa.types.is_fixed_size_binary(column.type) and column.null_count:
        return column.cast(pa.large_binary())
    return column


def _cells(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each value's length (-1: NULL) and the column's value bytes (from its first)."""
    if pa.types.is_fixed_size_binary(column.type):  # no NULL: one width, the bytes as they lie
        width = column.type.byte_width
        values = np.frombuffer(column.buffers()[1], dtype=np.uint8)
        start = column.offset * width
        return np.full(len(column), width, np.int64), values[start : start + len(column) * width]
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)[
        column.offset : column.offset + len(column) + 1
    ]
    lengths = np.diff(offsets)
    if column.null_count:
        lengths[~column.is_valid().to_numpy(zero_copy_only=False)] = -1
    data = column.buffers()[2]
    values = np.frombuffer(data, dtype=np.uint8) if data is not None else np.empty(0, np.uint8)
    return lengths, values[offsets[0] : offsets[-1]]


def _fixed_width(column: pa.Array, lengths: np.ndarray) -> int | None:
    """The one width of every value, when no value is NULL and all have it."""
    if pa.types.is_fixed_size_binary(column.type):
        return int(column.type.byte_width)
    if column.null_count or not len(lengths):
        return None
    width = int(lengths[0])
    return width if bool((lengths == width).all()) else None


def _values(column: pa.Array) -> pa.Array:
    """The values as written on the wire (nothing for NULL)."""
    return pc.fill_null(column, _EMPTY) if column.null_count else column


def _block(parts: list[np.ndarray], count: int) -> pa.Array:
    """Fixed-width parts side by side: one large_binary value a row."""
    block = np.empty(count, [(f"f{i}", part.dtype) for i, part in enumerate(parts)])
    for i, part in enumerate(parts):
        block[f"f{i}"] = part
    width = block.dtype.itemsize
    offsets = np.arange(count + 1, dtype=np.int64) * width
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(block)]
    )


def _data(rows: pa.Array) -> bytes:
    """The bytes of a large_binary array's values, back to back."""
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)[
        rows.offset : rows.offset + len(rows) + 1
    ]
    return rows.buffers()[2].slice(offsets[0], offsets[-1] - offsets[0]).to_pybytes()


_EMPTY = pa.scalar(b"", pa.large_binary())


def parameter_description(oids: Sequence[int]) -> bytes:
    return message(b"t", struct.pack(f"!h{len(oids)}i", len(oids), *oids))


PARSE_COMPLETE = message(b"1")
BIND_COMPLETE = message(b"2")
CLOSE_COMPLETE = message(b"3")
NO_DATA = message(b"n")
EMPTY_QUERY = message(b"I")
