"""``COPY t FROM STDIN`` over the protocol: CopyInResponse, then the client's CopyData
messages read as one byte stream (``engine.query._copy_from`` parses and loads it as one
snapshot) until CopyDone; CopyFail, or a row that does not load, commits nothing."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING

from kyma.engine.errors import QueryCancelledError, UnsupportedStatementError
from kyma.engine.query._access import WRITE, Access
from kyma.engine.query._copy_from import CopyFrom, load, statement, target
from kyma.pgwire import _messages as m

if TYPE_CHECKING:
    from kyma.pgwire._connection import Connection

__all__ = ["CopyFrom", "CopyStream", "run", "statement"]

Read = Callable[[], tuple[bytes, bytes]]


class CopyStream(io.RawIOBase):
    """The payloads of CopyData messages, ending at CopyDone or at the end-of-data line
    ``\\.`` (text and CSV, as Postgres reads them; what follows it is read and dropped);
    CopyFail raises QueryCancelledError (57014) with the client's message, as Postgres does."""

    def __init__(self, read: Read) -> None:
        self.read_message = read
        self.held = memoryview(b"")  # what is left of the last CopyData (no copies)
        self.done = False
        self.ended = False  # the end-of-data line came: the rest is not data
        self.line_start = True  # the next byte begins a line

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self.held and not self.done:
            if self.ended:
                return 0
            kind, payload = self.read_message()
            if kind == b"d":
                self.held = memoryview(self._before_end(payload))
            elif kind == b"c":
                self.done = True
            elif kind == b"f":
                self.done = True
                reason = payload.rstrip(b"\x00").decode(errors="replace")
                raise QueryCancelledError(f"COPY from stdin failed: {reason}")
            elif kind not in (b"H", b"S"):  # Flush and Sync are ignored while copying
                self.done = True
                raise UnsupportedStatementError(
                    f"unexpected message type 0x{kind.hex()} during COPY from stdin"
                )
        size = min(len(buffer), len(self.held))
        buffer[:size] = self.held[:size]
        self.held = self.held[size:]
        return size

    def _before_end(self, payload: bytes) -> bytes:
        """``payload`` up to an end-of-data line (``\\.`` alone) if it holds one.

        >>> stream = CopyStream(lambda: (b"c", b""))
        >>> stream._before_end(b"1\\tx\\n"), stream._before_end(b"\\\\.5\\n2\\n\\\\.\\n3\\n")
        (b'1\\tx\\n', b'\\\\.5\\n2\\n')
        >>> stream.ended
        True
        """
        skip = 1 if self.line_start else 0
        lines = b"\n" * skip + payload
        self.line_start = payload.endswith(b"\n")
        at = lines.find(b"\n\\.")
        while at >= 0:
            if lines[at + 3 : at + 4] in (b"", b"\n", b"\r"):
                self.ended = True
                return lines[skip : at + 1]
            at = lines.find(b"\n\\.", at + 1)
        return payload

    def drain(self) -> None:
        """Read to the end of the copy (after an error or the end-of-data line, the client
        still sends it)."""
        while not self.done:
            self.held, self.ended = memoryview(b""), False
            try:
                self.readinto(memoryview(bytearray(1)))
            except QueryCancelledError:
                return


def run(connection: Connection, copy: CopyFrom) -> str:
    """Load the rows the client sends; the status ``COPY <rows>``."""
    services, principal = connection.services, connection.principal
    assert principal is not None
    if not principal.unrestricted:
        principal.authorize(Access(WRITE, frozenset({copy.table})))
    writer = services.query.writer
    if writer is None:
        raise UnsupportedStatementError("COPY FROM: this kyma has no write path")
    schema = target(copy, services.catalog)
    width = len(schema)
    connection.send(m.message(b"G", struct.pack(f"!bh{width}h", 0, width, *([0] * width))))
    stream = CopyStream(connection.read_message)
    try:
        rows = load(copy, schema, io.BufferedReader(stream), writer)
    finally:
        stream.drain()
    return f"COPY {rows}"
