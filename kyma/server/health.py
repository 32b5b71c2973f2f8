"""Liveness and readiness."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from kyma.engine.errors import KymaError

blueprint = Blueprint("health", __name__)


@blueprint.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify({"status": "ok"})


@blueprint.get("/readyz")
def readyz():  # type: ignore[no-untyped-def]
    """Ready when the catalog answers and the object store lists."""
    services = current_app.extensions["kyma"]
    checks: dict[str, str] = {}
    for name, check in (
        ("catalog", services.catalog.ping),
        ("object_store", lambda: next(iter(services.store.list("tables/")), None)),
    ):
        try:
            check()
            checks[name] = "ok"
        except KymaError as e:
            checks[name] = f"error: {e}"
    ready = all(v == "ok" for v in checks.values())
    return jsonify({"status": "ready" if ready else "not_ready", "checks": checks}), (
        200 if ready else 503
    )
