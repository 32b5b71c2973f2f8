"""Liveness and readiness."""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, jsonify

from kyma.engine.errors import KymaError

blueprint = Blueprint("health", __name__)
log = logging.getLogger("kyma.server")
READY_TIMEOUT_SECONDS = 5


@blueprint.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify({"status": "ok"})


@blueprint.get("/readyz")
def readyz():  # type: ignore[no-untyped-def]
    """Ready when the catalog answers ``SELECT 1`` (within 5 s) and the object store lists;
    503 names the parts that failed (``failed``) and why (``checks``)."""
    services = current_app.extensions["kyma"]
    checks: dict[str, str] = {}
    for name, check in (
        ("catalog", lambda: services.catalog.ping(timeout=READY_TIMEOUT_SECONDS)),
        ("object_store", lambda: next(iter(services.store.list("tables/")), None)),
    ):
        try:
            check()
            checks[name] = "ok"
        except KymaError as e:
            checks[name] = f"error: {e}"
        except Exception as e:  # not translated by the part: still "not ready", never a 500
            log.warning("readiness check %s failed", name, exc_info=e)
            checks[name] = f"error: {type(e).__name__}: {e}"
    failed = [name for name, v in checks.items() if v != "ok"]
    body = {"status": "not_ready" if failed else "ready", "checks": checks}
    if failed:
        body["failed"] = failed
    return jsonify(body), 503 if failed else 200
