"""A Postgres protocol client on a bare socket, for what drivers never send: start-ups
that stop halfway, oversized messages, many portals."""

from __future__ import annotations

import socket
import struct

PROTOCOL_V3 = 196608


def startup(user: str = "kyma", database: str = "kyma") -> bytes:
    body = struct.pack("!i", PROTOCOL_V3)
    body += b"user\x00" + user.encode() + b"\x00database\x00" + database.encode() + b"\x00\x00"
    return struct.pack("!i", len(body) + 4) + body


def message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def cstring(text: str) -> bytes:
    return text.encode() + b"\x00"


def read_message(sock: socket.socket) -> tuple[bytes, bytes]:
    """(type byte, body); (b"", b"") when the server closed the connection."""
    head = _exact(sock, 5)
    if len(head) < 5:
        return b"", b""
    (length,) = struct.unpack("!i", head[1:])
    return head[:1], _exact(sock, length - 4)


def error_fields(body: bytes) -> dict[str, str]:
    """An ErrorResponse's fields by code letter: ``C`` the SQLSTATE, ``M`` the message."""
    fields = {}
    for part in body.split(b"\x00"):
        if part:
            fields[part[:1].decode()] = part[1:].decode()
    return fields


def connect(port: int, password: str | None) -> socket.socket:
    """A connection past start-up (and the password when the server asks), at ReadyForQuery."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(startup())
    kind, body = read_message(sock)
    if kind == b"R" and body == struct.pack("!i", 3):
        assert password is not None, "the server asks for a password"
        sock.sendall(message(b"p", cstring(password)))
        kind, body = read_message(sock)
    assert kind == b"R", (kind, body)
    until(sock, b"Z")
    return sock


def until(sock: socket.socket, kind: bytes) -> list[tuple[bytes, bytes]]:
    """Messages up to and including the first of ``kind``."""
    seen = []
    while True:
        got = read_message(sock)
        seen.append(got)
        if got[0] in (kind, b""):
            return seen


def _exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data
