"""POST /v1/query: one SQL statement in, columns and rows out."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import pyarrow as pa
from flask import Blueprint, current_app, jsonify, request

from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.types import KymaType

blueprint = Blueprint("query", __name__)


@blueprint.post("/v1/query")
def query():  # type: ignore[no-untyped-def]
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
        raise SqlError('expected a JSON body {"sql": "..."}')
    result = current_app.extensions["kyma"].query.execute(body["sql"])
    return jsonify(to_json(result))


def to_json(result: QueryResult) -> dict[str, Any]:
    """The JSON answer: typed column list, rows as arrays, status and stats."""
    table = result.table
    columns = [{"name": f.name, "type": _type_name(f.type)} for f in table.schema]
    rows = [[_json_value(v) for v in row.values()] for row in table.to_pylist()]
    return {"columns": columns, "rows": rows, "status": result.status, "stats": result.stats}


def _type_name(dtype: pa.DataType) -> str:
    try:
        return KymaType.from_arrow(dtype).name
    except ValueError:
        return str(dtype)


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value
