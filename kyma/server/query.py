"""POST /v1/query: one SQL statement in; JSON, an Arrow IPC stream or a Parquet file out."""

from __future__ import annotations

import base64
import math
from decimal import Decimal
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from flask import Blueprint, Response, current_app, request

from kyma.dynamic import is_dynamic, json_texts
from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.query.durations import milliseconds
from kyma.engine.query.pg_numeric import decimals, is_numeric_text
from kyma.engine.types import KymaType
from kyma.logs import request_id
from kyma.server.auth import principal
from kyma.server.json_rows import rows_json

blueprint = Blueprint("query", __name__)
ARROW_STREAM = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
STATUS_HEADER = "X-Kyma-Status"  # an Arrow answer's status line (``INSERT 0 3``)


@blueprint.post("/v1/query")
def query():  # type: ignore[no-untyped-def]
    """Body: ``{"sql": "...", "snapshot": 42, "pruning": true}``.

    ``snapshot`` (optional) reads as of that snapshot; ``pruning: false`` disables the
    pruning cascade, a diagnostic whose answers must equal the pruned ones;
    ``pushdown: false`` sends only projections to federated sources (a baseline);
    ``statement_timeout`` (milliseconds, or Postgres's ``"1s"``, ``"500ms"``…) cancels the
    statement sooner than the server's timeout, as the Postgres setting does.
    """
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
        raise SqlError('expected a JSON body {"sql": "..."}')
    snapshot = body.get("snapshot")
    if snapshot is not None and (not isinstance(snapshot, int) or isinstance(snapshot, bool)):
        raise SqlError(f"snapshot: expected an integer snapshot id, got {snapshot!r}")
    switches = {}
    for switch in ("pruning", "pushdown"):
        switches[switch] = body.get(switch, True)
        if not isinstance(switches[switch], bool):
            raise SqlError(f"{switch}: expected true or false, got {switches[switch]!r}")
    timeout = body.get("statement_timeout", 0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, str)):
        raise SqlError(f"statement_timeout: expected milliseconds or '1s', got {timeout!r}")
    caller = principal()
    services = current_app.extensions["kyma"]
    # waitress's (see ingest/listener): true once the client closed its connection
    cancel = request.environ.get("waitress.client_disconnected")
    result = services.query.execute(
        body["sql"],
        snapshot=snapshot,
        authorize=None if caller.unrestricted else caller.authorize,
        cancel=cancel,
        timeout=milliseconds("statement_timeout", timeout) / 1000,
        caller=caller.caller("http", request_id=request_id.get()),
        **switches,
    )
    accept = request.headers.get("Accept", "")
    headers = {STATUS_HEADER: result.status} if result.status.isascii() else {}
    if ARROW_STREAM in accept:
        return Response(to_arrow_stream(result.table), mimetype=ARROW_STREAM, headers=headers)
    if PARQUET in accept:
        return Response(to_parquet(result.table), mimetype=PARQUET, headers=headers)
    # orjson, not jsonify: decimals go out as JSON numbers with every digit (Fragment).
    return Response(orjson.dumps(to_json(result), default=_other), mimetype="application/json")


def to_arrow_stream(table: pa.Table) -> bytes:
    """``table`` as an Arrow IPC stream (numeric text as decimals: ``pg_numeric.decimals``)."""
    table = decimals(table)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def to_parquet(table: pa.Table) -> bytes:
    """``table`` as one Parquet file (zstd), its Arrow schema kept in the file's metadata."""
    sink = pa.BufferOutputStream()
    pq.write_table(decimals(table), sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def to_json(result: QueryResult) -> dict[str, Any]:
    """The JSON answer: typed column list, rows as arrays, status and stats.

    Timestamps are RFC 3339 strings in UTC with nanoseconds, dynamic values are their JSON
    value, other binary values base64, NaN and infinities null (JSON cannot spell them).
    """
    answer = table_json(result.table) | {"status": result.status, "stats": result.stats}
    if result.pushdown_summary:
        answer["pushdown_summary"] = result.pushdown_summary
    return answer


def table_json(table: pa.Table) -> dict[str, Any]:
    """``{"columns": [{"name", "type"}], "rows": [[...], ...]}`` of ``table`` (for orjson)."""
    columns = [{"name": f.name, "type": _type_name(f)} for f in table.schema]
    rows: Any = rows_json(table, _timestamps)
    if rows is None:
        values = [json_column(f, table.column(i)) for i, f in enumerate(table.schema)]
        rows = [list(row) for row in zip(*values, strict=True)] if values else []
    return {"columns": columns, "rows": rows}


def json_column(field: pa.Field, col: pa.ChunkedArray) -> list[Any]:
    dtype = field.type
    if is_dynamic(field):
        texts = json_texts(col).to_pylist()
        return [None if t is None else orjson.Fragment(t) for t in texts]
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return [None if v is None else base64.b64encode(v).decode() for v in col.to_pylist()]
    if pa.types.is_timestamp(dtype):
        return _timestamps(col)
    if pa.types.is_decimal(dtype):
        return [None if v is None else orjson.Fragment(_decimal_text(v)) for v in col.to_pylist()]
    if is_numeric_text(field):  # a JSON number with Postgres's digits
        return [None if v is None else orjson.Fragment(v) for v in col.to_pylist()]
    if pa.types.is_float32(dtype):  # float4's shortest digits (``0.33333334``), as Postgres
        texts = pc.if_else(pc.is_finite(col), col.cast(pa.string()), None).to_pylist()
        return [None if t is None else orjson.Fragment(_real_text(t)) for t in texts]
    safe = _json_safe(dtype)
    values = col.cast(safe).to_pylist() if safe != dtype else col.to_pylist()
    return _finite(values) if _has_float(dtype) else values


def _other(value: Any) -> Any:
    """What orjson does not render itself: tuples (an interval's parts) as lists, else text."""
    return list(value) if isinstance(value, tuple) else str(value)


def _decimal_text(value: Decimal) -> str:
    """A decimal as a JSON number: every digit, no exponent, no trailing fractional zeros.

    >>> _decimal_text(Decimal("25.93706293706293710000")), _decimal_text(Decimal("1E+2"))
    ('25.9370629370629371', '100')
    """
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _real_text(text: str) -> str:
    """Arrow's text of a finite real, a whole number with ``.0`` as orjson writes floats."""
    return text if any(c in text for c in ".en") else text + ".0"


def _has_float(dtype: pa.DataType) -> bool:
    if pa.types.is_floating(dtype):
        return True
    return any(_has_float(dtype.field(i).type) for i in range(dtype.num_fields))


def _timestamps(col: pa.ChunkedArray) -> list[Any]:
    dtype = col.type
    if dtype.tz is None:
        return pc.strftime(col, format="%Y-%m-%dT%H:%M:%S").to_pylist()
    utc = col.cast(pa.timestamp(dtype.unit, "UTC"))
    return pc.strftime(utc, format="%Y-%m-%dT%H:%M:%SZ").to_pylist()


def _json_safe(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with every part JSON cannot hold as-is (times, durations, decimals,
    binary views) replaced by its string rendering. Intervals stay: they render as
    ``[months, days, nanoseconds]``."""
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(_json_safe(dtype.value_type))
    if pa.types.is_fixed_size_list(dtype):
        return pa.list_(_json_safe(dtype.value_type), dtype.list_size)
    if pa.types.is_struct(dtype):
        return pa.struct([f.with_type(_json_safe(f.type)) for f in dtype])
    if pa.types.is_interval(dtype):
        return dtype
    if pa.types.is_temporal(dtype) or pa.types.is_decimal(dtype) or pa.types.is_binary_view(dtype):
        return pa.string()
    return dtype


def _finite(values: list[Any]) -> list[Any]:
    """NaN and infinities, also inside lists and structs, as null."""

    def clean(value: Any) -> Any:
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    return [clean(v) for v in values]


def _type_name(field: pa.Field) -> str:
    if is_dynamic(field):
        return "dynamic"
    if pa.types.is_binary(field.type):
        return "binary"
    if is_numeric_text(field):
        return "numeric"
    try:
        return KymaType.from_arrow(field.type).name
    except ValueError:
        return str(field.type)
