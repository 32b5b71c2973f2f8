"""API tokens over REST (admin): create (the token is in this answer only), list, revoke."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, request

from kyma.auth import create_token
from kyma.engine.errors import ConfigError
from kyma.tokens import TokenRecord

blueprint = Blueprint("tokens", __name__)


@blueprint.post("/v1/tokens")
def create():  # type: ignore[no-untyped-def]
    """Body: ``{"scopes": ["read"], "tables": ["logs"], "name": "grafana"}``."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("scopes"), list):
        raise ConfigError('expected a JSON body {"scopes": ["read"], "tables"?: [...]}')
    tables = body.get("tables")
    if tables is not None and not isinstance(tables, list):
        raise ConfigError("tables: expected a list of table names")
    tokens = current_app.extensions["kyma"].stores.tokens
    token, record = create_token(tokens, body["scopes"], tables, body.get("name"))
    return jsonify({**describe(record), "token": token}), 201


@blueprint.get("/v1/tokens")
def list_all():  # type: ignore[no-untyped-def]
    tokens = current_app.extensions["kyma"].stores.tokens
    return jsonify({"tokens": [describe(r) for r in tokens.list_all()]})


@blueprint.delete("/v1/tokens/<int:token_id>")
def revoke(token_id: int):  # type: ignore[no-untyped-def]
    return jsonify(describe(current_app.extensions["kyma"].stores.tokens.revoke(token_id)))


def describe(record: TokenRecord) -> dict[str, Any]:
    return {
        "id": record.token_id,
        "name": record.name,
        "scopes": record.scopes,
        "tables": record.tables,
        "created_at": record.created_at.isoformat(),
        "revoked_at": record.revoked_at.isoformat() if record.revoked_at else None,
    }
