"""Connectors over REST: create, list, describe, edit, status, enable, refresh, delete."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request

from kyma.connectors.registry import ConnectorRegistry
from kyma.engine.errors import ConfigError, NotFoundError
from kyma.server.auth import principal

blueprint = Blueprint("connectors", __name__)


def _registry() -> ConnectorRegistry:
    return current_app.extensions["kyma"].connectors


@blueprint.post("/v1/connectors")
def create():  # type: ignore[no-untyped-def]
    """Body as in the Postgres connector spec: name, type, mode, connection, scope, sync."""
    body = request.get_json(force=True, silent=True)
    if body is None:
        raise ConfigError("body: expected a JSON object")
    return jsonify(_registry().create(body)), 201


@blueprint.get("/v1/connectors")
def list_all():  # type: ignore[no-untyped-def]
    return jsonify({"connectors": _registry().list()})


@blueprint.get("/v1/connectors/<key>")
def describe(key: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().describe(key))


@blueprint.patch("/v1/connectors/<key>")
def update(key: str):  # type: ignore[no-untyped-def]
    """A JSON merge patch of the definition: ``{"connection": {"pool_size": 8}}``."""
    body = request.get_json(force=True, silent=True)
    if body is None:
        raise ConfigError("body: expected a JSON object")
    return jsonify(_registry().update(key, body))


@blueprint.get("/v1/connectors/<key>/status")
def status(key: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().status(key))


@blueprint.get("/v1/connectors/<key>/tables")
def tables(key: str):  # type: ignore[no-untyped-def]
    """The source as a catalog: schemas, tables and columns in scope, with kyma types; a
    token limited to some tables sees those (``<connector>.<schema>.<table>``) alone."""
    caller = principal()
    if not caller.limited:
        return jsonify({"tables": _registry().tables(key)})
    name = caller.require_catalog(_connector_name(key), key)
    found = _registry().tables(name)
    granted = [t for t in found if caller.may_touch(f"{name}.{t['schema']}.{t['name']}")]
    return jsonify({"tables": granted})


@blueprint.post("/v1/connectors/<key>/enable")
def enable(key: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().enable(key))


@blueprint.post("/v1/connectors/<key>/refresh")
def refresh(key: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().refresh(key))


@blueprint.delete("/v1/connectors/<key>")
def delete(key: str):  # type: ignore[no-untyped-def]
    _registry().drop(key)
    return "", 204


def _connector_name(key: str) -> str | None:
    """The name of connector ``key`` (a name or an id), None when there is none."""
    try:
        return _registry().records.get(key).name
    except NotFoundError:
        return None
