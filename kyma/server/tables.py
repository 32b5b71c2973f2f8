"""Tables over REST: create (the JSON form of CREATE TABLE), list, describe."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, request

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import SchemaError
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column, KymaType

blueprint = Blueprint("tables", __name__)


@blueprint.post("/v1/tables")
def create_table():  # type: ignore[no-untyped-def]
    """Body: ``{"name": "logs", "columns": [{"name": "x", "type": "long"}], "if_not_exists"}``."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise SchemaError('expected a JSON body {"name": "...", "columns": [...]}')
    columns = body.get("columns", [])
    if not isinstance(columns, list):
        raise SchemaError("columns: expected a list of {name, type} objects")
    parsed = []
    for i, col in enumerate(columns):
        if not isinstance(col, dict) or not isinstance(col.get("name"), str):
            raise SchemaError(f"columns[{i}]: expected an object with a string 'name'")
        parsed.append(Column(col["name"], KymaType.parse(str(col.get("type", "")))))
    catalog = current_app.extensions["kyma"].catalog
    info = catalog.create_table(
        body["name"], parsed, if_not_exists=bool(body.get("if_not_exists", False))
    )
    return jsonify(describe(info)), 201


@blueprint.get("/v1/tables")
def list_tables():  # type: ignore[no-untyped-def]
    catalog = current_app.extensions["kyma"].catalog
    return jsonify({"tables": [describe(t, extents=False) for t in catalog.list_tables()]})


@blueprint.get("/v1/tables/<name>")
def get_table(name: str):  # type: ignore[no-untyped-def]
    return jsonify(describe(current_app.extensions["kyma"].catalog.get_table(name)))


def describe(info: TableInfo, *, extents: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": info.name,
        "columns": [
            {"name": c.name, "type": c.type.name, "default": c.name in DEFAULT_COLUMN_NAMES}
            for c in info.columns
        ],
        "snapshot_id": info.current_snapshot_id,
        "created_at": info.created_at.isoformat(),
    }
    if extents:
        live = current_app.extensions["kyma"].catalog.live_extents(info.name)
        out.update(
            extents=len(live),
            rows=sum(e.row_count for e in live),
            bytes=sum(e.byte_size for e in live),
        )
    return out
