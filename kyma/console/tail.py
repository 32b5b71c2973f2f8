"""GET /v1/tables/<name>/tail: live tail as server-sent events, pushed from the commit path.

Each commit that appends rows to the table (``LiveHub``) becomes one ``rows`` event holding
those rows (the newest ``limit`` of them), read from the commit's new extents — no query is
polled. Comments keep the stream open through proxies; the stream ends when the client
goes away or the server stops.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
from flask import Blueprint, Response, current_app, request

from kyma.engine.catalog._commit import CommitEvent
from kyma.engine.errors import KymaError, SqlError, error_code
from kyma.engine.query._scan import conform
from kyma.server.query import table_json

if TYPE_CHECKING:
    from kyma.services import Services


blueprint = Blueprint("tail", __name__)
WAKE_SECONDS = 0.5  # how often a quiet stream checks that its client is still there
KEEPALIVE_SECONDS = 15.0
DEFAULT_LIMIT = 500
MAX_LIMIT = 10_000


@blueprint.get("/v1/tables/<name>/tail")
def tail(name: str):  # type: ignore[no-untyped-def]
    """``text/event-stream``: ``event: rows`` with ``id`` the snapshot and ``data``
    ``{"table", "snapshot_id", "rows_committed", "dropped", "columns", "rows"}``;
    ``?limit=`` the most rows an event carries (default 500). A commit whose rows cannot be
    read (its extents already gone, the catalog down) is an ``error`` event instead."""
    services: Services = current_app.extensions["kyma"]
    services.catalog.get_table(name)  # 404 before the stream starts
    limit = request.args.get("limit", str(DEFAULT_LIMIT))
    if not limit.isdigit() or not 0 < int(limit) <= MAX_LIMIT:
        raise SqlError(f"limit: expected a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    gone = request.environ.get("waitress.client_disconnected") or (lambda: False)
    stack = ExitStack()
    subscription = stack.enter_context(services.live.subscribe(name))

    def stream() -> Iterator[bytes]:
        yield b"retry: 1000\n: tailing\n\n"
        quiet_since = time.monotonic()
        while not services.live.closed.is_set() and not gone():
            event = subscription.next(WAKE_SECONDS)
            if event is not None:
                try:
                    body = _event(services, event, int(limit)) | {"dropped": subscription.dropped}
                    yield b"event: rows\nid: %d\ndata: %s\n\n" % (event.snapshot_id, _dumps(body))
                except KymaError as e:  # its extents gone already (a slow tail), the catalog down
                    error = {"snapshot_id": event.snapshot_id, "error": error_code(e)}
                    yield b"event: error\ndata: %s\n\n" % _dumps(error | {"message": str(e)})
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
                yield b": keep-alive\n\n"
                quiet_since = time.monotonic()

    response = Response(
        stream(),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.call_on_close(stack.close)
    return response


def _event(services: Services, event: CommitEvent, limit: int) -> dict[str, Any]:
    """The rows ``event`` committed (its newest ``limit``), as the query API's JSON has them."""
    info = services.catalog.get_table(event.table)
    batches: list[pa.RecordBatch] = []
    for extent in event.added:
        reader = services.format.open_extent(services.store, extent.object_path)
        try:
            blocks = list(range(extent.block_count))
            batches.extend(conform(b, info.schema) for b in reader.read_blocks(blocks))
        finally:
            reader.close()
    table = pa.Table.from_batches(batches, info.schema)
    if table.num_rows > limit:
        table = table.slice(table.num_rows - limit)
    head = {"table": event.table, "snapshot_id": event.snapshot_id, "rows_committed": event.rows}
    return head | table_json(table)


def _dumps(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body, default=str)
