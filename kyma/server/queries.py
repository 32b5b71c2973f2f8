"""GET /v1/queries and DELETE /v1/queries/<id>: the statements running now, and stopping one.

Any caller with a token sees and stops their own statements; an admin sees and stops all.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from kyma.engine.errors import NotFoundError
from kyma.server.auth import principal

blueprint = Blueprint("queries", __name__)


@blueprint.get("/v1/queries")
def running():  # type: ignore[no-untyped-def]
    """``{"queries": [{"id", "principal", "client", "request_id", "sql", "started",
    "elapsed_ms", "progress", "stopping"}]}``, oldest first; ``request_id`` is the
    ``X-Request-Id`` of the HTTP request that sent it (null from other interfaces)."""
    statements = current_app.extensions["kyma"].query.running
    visible = statements.visible(principal().caller("http"))
    return jsonify({"queries": [s.view() for s in visible]})


@blueprint.get("/v1/queries/<statement_id>")
def one(statement_id: str):  # type: ignore[no-untyped-def]
    """One running statement's entry, with its progress; 404 once it has ended."""
    statements = current_app.extensions["kyma"].query.running
    for statement in statements.visible(principal().caller("http")):
        if statement.id == statement_id:
            return jsonify(statement.view())
    raise NotFoundError(f"no running statement {statement_id!r}")


@blueprint.delete("/v1/queries/<statement_id>")
def stop(statement_id: str):  # type: ignore[no-untyped-def]
    """Stop a running statement: it ends with 57014 (HTTP 499 for its own caller)."""
    statements = current_app.extensions["kyma"].query.running
    statement = statements.stop(statement_id, principal().caller("http"))
    return jsonify({"id": statement.id, "stopping": True}), 202
