"""Ingest sources over REST: create, list, describe, status, delete."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request

from kyma.engine.errors import ConfigError
from kyma.ingest.sources import SourceRegistry

blueprint = Blueprint("sources", __name__)


def _registry() -> SourceRegistry:
    return current_app.extensions["kyma"].sources


@blueprint.post("/v1/sources")
def create():  # type: ignore[no-untyped-def]
    """Body: name, type ("kafka"), table, kafka {bootstrap_servers, topics, group_id}, batch."""
    body = request.get_json(force=True, silent=True)
    if body is None:
        raise ConfigError("body: expected a JSON object")
    return jsonify(_registry().create(body)), 201


@blueprint.get("/v1/sources")
def list_all():  # type: ignore[no-untyped-def]
    return jsonify({"sources": _registry().list()})


@blueprint.get("/v1/sources/<name>")
def describe(name: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().describe(name))


@blueprint.get("/v1/sources/<name>/status")
def status(name: str):  # type: ignore[no-untyped-def]
    return jsonify(_registry().status(name))


@blueprint.delete("/v1/sources/<name>")
def delete(name: str):  # type: ignore[no-untyped-def]
    _registry().drop(name)
    return "", 204
