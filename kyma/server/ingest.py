"""POST /v1/ingest/<table>: an NDJSON body (optionally gzip or zstd) into one snapshot."""

from __future__ import annotations

import zlib

import zstandard
from flask import Blueprint, current_app, jsonify, request

from kyma.engine.catalog import Catalog
from kyma.engine.errors import IngestError, LimitExceededError, NotFoundError
from kyma.ingest.coerce import Lines, scan
from kyma.ingest.write_path import IngestAck

blueprint = Blueprint("ingest", __name__)
_SLICE = 1024  # compressed bytes per step; one step inflates to at most ~32 MiB (zstd)


@blueprint.post("/v1/ingest/<table>")
def ingest(table: str):  # type: ignore[no-untyped-def]
    services = current_app.extensions["kyma"]
    limits = services.settings
    body = read_body(limits.max_body_bytes, limits.max_rows_per_request)
    lines = check_lines(body, limits.max_line_bytes, limits.max_rows_per_request)
    evolve = _flag(request.args.get("schema_evolve", "true"), "schema_evolve")
    default = "true" if limits.ingest_create_tables else "false"
    create = _flag(request.args.get("create", default), "create")
    if create and not evolve:
        raise IngestError("create=true needs schema_evolve=true: a new table takes its columns")

    def write() -> IngestAck:
        return services.write_path.ingest_ndjson(
            table,
            body,
            idempotency_key=request.headers.get("X-Idempotency-Key"),
            schema_evolve=evolve,
            lines=lines,
        )

    try:
        ack = write()
    except NotFoundError as e:
        if _exists(services.catalog, table):
            raise
        if not create:
            hint = "create it (CREATE TABLE, POST /v1/tables) or send ?create=true"
            raise NotFoundError(f"{e}: {hint}") from None
        # a missing table with create on: made empty (the default columns), then the body's
        # fields become its columns by evolution, as for any new field
        services.catalog.create_table(table, [], if_not_exists=True)
        ack = write()
    return jsonify(ack.to_json())


def _exists(catalog: Catalog, table: str) -> bool:
    try:
        catalog.get_table(table)
    except NotFoundError:
        return False
    return True


def _flag(value: str, name: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise IngestError(f"query parameter {name}={value!r}: expected true or false")


def read_body(max_bytes: int, max_rows: int) -> bytes:
    """The request body, decompressed, refusing to grow past ``max_bytes`` or
    ``max_rows`` lines: both are checked as it inflates, not after."""
    if request.content_length is not None and request.content_length > max_bytes:
        raise LimitExceededError(
            f"request body of {request.content_length} bytes exceeds max_body_bytes={max_bytes}",
            "max_body_bytes",
        )
    encoding = (request.headers.get("Content-Encoding") or "identity").lower()
    stream = request.stream
    if encoding == "identity":
        raw = stream.read(max_bytes + 1)
        _check_size(len(raw), max_bytes)
        return raw
    if encoding in ("gzip", "zstd"):
        return _decompress(encoding, stream, max_bytes, max_rows)
    raise IngestError(f"Content-Encoding {encoding!r} is not supported: use gzip or zstd")


def _decompress(encoding: str, stream, max_bytes: int, max_rows: int) -> bytes:  # type: ignore[no-untyped-def]
    """Decompress in small input slices so a bomb cannot grow far past ``max_bytes``.

    Concatenated gzip members and zstd frames (as pigz or ``cat a.gz b.gz`` make) all count.
    """
    out = bytearray()
    newlines = 0
    decompressor = _decompressor(encoding)
    pending = b""
    while True:
        chunk = pending or stream.read(_SLICE)
        pending = b""
        if not chunk:
            break
        try:
            piece = decompressor.decompress(chunk)
        except (zlib.error, zstandard.ZstdError) as e:
            raise IngestError(f"body is not valid {encoding}: {e}") from None
        out += piece
        newlines += piece.count(b"\n")
        _check_size(len(out), max_bytes, "decompressed body")
        _check_rows(newlines, max_rows)
        if decompressor.eof:  # one member ended: the rest, if any, is the next one
            pending = decompressor.unused_data
            if pending or (pending := stream.read(_SLICE)):
                decompressor = _decompressor(encoding)
    if not decompressor.eof:
        raise IngestError(f"body is truncated {encoding}: the stream ended early")
    return bytes(out)


def _decompressor(encoding: str):  # type: ignore[no-untyped-def]
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    return zstandard.ZstdDecompressor().decompressobj()


def _check_size(size: int, max_bytes: int, what: str = "body") -> None:
    if size > max_bytes:
        raise LimitExceededError(f"{what} exceeds max_body_bytes={max_bytes}", "max_body_bytes")


def _check_rows(newlines: int, max_rows: int) -> None:
    """More newlines than ``max_rows`` means more lines (a last line without one counts)."""
    if newlines > max_rows:
        raise LimitExceededError(
            f"body has more than max_rows_per_request={max_rows} lines", "max_rows_per_request"
        )


def check_lines(body: bytes, max_line_bytes: int, max_rows: int) -> Lines:
    """413 for more than ``max_rows`` lines or a line over ``max_line_bytes``; else the
    body's lines (one pass, without the GIL; the write path reads them too)."""
    lines = scan(body, max_rows)
    if lines is None:  # more newlines than max_rows: more lines (a last one without counts)
        raise LimitExceededError(
            f"body has more than max_rows_per_request={max_rows} lines", "max_rows_per_request"
        )
    lengths = lines.lengths
    longest = int(lengths.max())
    if longest > max_line_bytes:
        line = int(lengths.argmax()) + 1
        raise LimitExceededError(
            f"line {line} is {longest} bytes, over max_line_bytes={max_line_bytes}",
            "max_line_bytes",
        )
    return lines
