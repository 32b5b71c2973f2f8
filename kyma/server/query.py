"""POST /v1/query: one SQL statement in; JSON, or an Arrow IPC stream, out."""

from __future__ import annotations

import math
from typing import Any

import cbor2
import pyarrow as pa
import pyarrow.compute as pc
from flask import Blueprint, Response, current_app, jsonify, request

from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.types import KymaType

blueprint = Blueprint("query", __name__)
ARROW_STREAM = "application/vnd.apache.arrow.stream"


@blueprint.post("/v1/query")
def query():  # type: ignore[no-untyped-def]
    """Body: ``{"sql": "...", "snapshot": 42, "pruning": true}``.

    ``snapshot`` (optional) reads as of that snapshot; ``pruning: false`` disables the
    pruning cascade, a diagnostic whose answers must equal the pruned ones.
    """
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
        raise SqlError('expected a JSON body {"sql": "..."}')
    snapshot = body.get("snapshot")
    if snapshot is not None and (not isinstance(snapshot, int) or isinstance(snapshot, bool)):
        raise SqlError(f"snapshot: expected an integer snapshot id, got {snapshot!r}")
    pruning = body.get("pruning", True)
    if not isinstance(pruning, bool):
        raise SqlError(f"pruning: expected true or false, got {pruning!r}")
    result = current_app.extensions["kyma"].query.execute(
        body["sql"], snapshot=snapshot, pruning=pruning
    )
    if ARROW_STREAM in request.headers.get("Accept", ""):
        return Response(to_arrow_stream(result.table), mimetype=ARROW_STREAM)
    return jsonify(to_json(result))


def to_arrow_stream(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def to_json(result: QueryResult) -> dict[str, Any]:
    """The JSON answer: typed column list, rows as arrays, status and stats.

    Timestamps are RFC 3339 strings with nanoseconds, dynamic values are their JSON value,
    NaN and infinities are null (JSON has no spelling for them).
    """
    table = result.table
    columns = [{"name": f.name, "type": _type_name(f.type)} for f in table.schema]
    values = [_json_column(table.column(i)) for i in range(table.num_columns)]
    rows = [list(row) for row in zip(*values, strict=True)] if values else []
    return {"columns": columns, "rows": rows, "status": result.status, "stats": result.stats}


def _json_column(col: pa.ChunkedArray) -> list[Any]:
    dtype = col.type
    if pa.types.is_timestamp(dtype):
        suffix = "Z" if dtype.tz else ""
        return pc.strftime(col, format=f"%Y-%m-%dT%H:%M:%S{suffix}").to_pylist()
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return [None if v is None else cbor2.loads(v) for v in col.to_pylist()]
    if pa.types.is_floating(dtype):
        return [None if v is None or not math.isfinite(v) else v for v in col.to_pylist()]
    if pa.types.is_temporal(dtype) or pa.types.is_decimal(dtype):
        return pc.cast(col, pa.string()).to_pylist()
    return col.to_pylist()


def _type_name(dtype: pa.DataType) -> str:
    try:
        return KymaType.from_arrow(dtype).name
    except ValueError:
        return str(dtype)
