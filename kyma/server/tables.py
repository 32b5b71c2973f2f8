"""Tables over REST: create (the JSON form of CREATE TABLE), list, describe, column stats."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, request

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import SchemaError
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column, KymaType
from kyma.server.auth import principal

blueprint = Blueprint("tables", __name__)


@blueprint.post("/v1/tables")
def create_table():  # type: ignore[no-untyped-def]
    """Body: ``{"name": "logs", "columns": [{"name": "x", "type": "long"}], "if_not_exists",
    "options": {"schema_evolution": "typed"}}`` (``schema_evolution`` may also sit at the top)."""
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
    options = body.get("options", {})
    if not isinstance(options, dict):
        raise SchemaError('options: expected an object such as {"schema_evolution": "typed"}')
    if "schema_evolution" in body:
        options = {**options, "schema_evolution": body["schema_evolution"]}
    catalog = current_app.extensions["kyma"].catalog
    info = catalog.create_table(
        body["name"],
        parsed,
        if_not_exists=bool(body.get("if_not_exists", False)),
        options=options,
    )
    return jsonify(describe(info)), 201


@blueprint.get("/v1/tables")
def list_tables():  # type: ignore[no-untyped-def]
    """The tables the caller may read."""
    catalog = current_app.extensions["kyma"].catalog
    caller = principal()
    listed = [t for t in catalog.list_tables() if caller.may_touch(t.name)]
    return jsonify({"tables": [describe(t, extents=False) for t in listed]})


@blueprint.get("/v1/tables/<name>")
def get_table(name: str):  # type: ignore[no-untyped-def]
    return jsonify(describe(current_app.extensions["kyma"].catalog.get_table(name)))


@blueprint.get("/v1/tables/<name>/stats")
def table_stats(name: str):  # type: ignore[no-untyped-def]
    """Written-data statistics per column, like the peer's report: rows written while the
    column existed, nulls among them, the value types seen, first/last snapshot with a value."""
    catalog = current_app.extensions["kyma"].catalog
    info = catalog.get_table(name)
    stats = catalog.column_stats(name)
    empty = {"rows": 0, "nulls": 0, "types_seen": []}
    empty |= {"first_seen_snapshot": None, "last_seen_snapshot": None}
    columns = [
        {"name": c.name, "type": c.type.name, "evolved_from": c.evolved_from}
        | stats.get(c.name, empty)
        for c in info.columns
    ]
    return jsonify(
        {"table": info.name, "snapshot_id": info.current_snapshot_id, "columns": columns}
    )


def describe(info: TableInfo, *, extents: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": info.name,
        "columns": [
            {
                "name": c.name,
                "type": c.type.name,
                "default": c.name in DEFAULT_COLUMN_NAMES,
                "evolved_from": c.evolved_from,
            }
            for c in info.columns
        ],
        "options": info.options,
        "snapshot_id": info.current_snapshot_id,
        "created_at": info.created_at.isoformat(),
    }
    if extents:
        live = current_app.extensions["kyma"].catalog.live_extents(info.name)
        out.update(
            extents=len(live),
            rows=sum(e.live_rows for e in live),
            bytes=sum(e.byte_size for e in live),
        )
    return out
