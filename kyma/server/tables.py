"""Tables over REST: create (the JSON form of CREATE TABLE), list, describe, column stats,
history (schema changes, recent commits, rows per second)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Blueprint, current_app, jsonify, request

from kyma.engine.catalog import TableInfo
from kyma.engine.errors import SchemaError
from kyma.engine.types import DEFAULT_COLUMN_NAMES, Column, KymaType
from kyma.server.auth import principal

blueprint = Blueprint("tables", __name__)
RATE_WINDOW = timedelta(seconds=60)  # rows per second: over the commits of the last minute
RATE_COMMITS = 1000  # … among the newest this many
RECENT_COMMITS = 50


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


@blueprint.get("/v1/tables/<name>/history")
def table_history(name: str):  # type: ignore[no-untyped-def]
    """The columns in the order they were added (``evolved_from`` for one schema evolution
    made), the newest commits with their summaries, and rows committed per second over
    the last minute."""
    catalog = current_app.extensions["kyma"].catalog
    info = catalog.get_table(name)
    added = catalog.columns_added(name)
    columns = sorted(
        (
            {
                "name": c.name,
                "type": c.type.name,
                "evolved_from": c.evolved_from,
                "added_at": added[c.name].isoformat(),
            }
            for c in info.columns
        ),
        key=lambda c: c["added_at"],
    )
    snapshots = catalog.snapshots(name, last=RATE_COMMITS)
    since = datetime.now(UTC) - RATE_WINDOW
    rows = sum(s.summary.get("added_rows", 0) for s in snapshots if s.created_at >= since)
    commits = [
        {"snapshot_id": s.snapshot_id, "created_at": s.created_at.isoformat(), **s.summary}
        for s in reversed(snapshots[-RECENT_COMMITS:])
    ]
    return jsonify(
        {
            "table": info.name,
            "columns": columns,
            "commits": commits,
            "rows_per_second": round(rows / RATE_WINDOW.total_seconds(), 3),
            "rate_window_seconds": int(RATE_WINDOW.total_seconds()),
        }
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
