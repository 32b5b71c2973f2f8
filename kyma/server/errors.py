"""kyma's errors as HTTP answers, with the status the one table (kyma.engine.error_statuses)
gives each class."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from kyma.engine import errors as e
from kyma.engine.error_statuses import status as status_of

log = logging.getLogger("kyma.server")


def register(app: Flask) -> None:
    @app.errorhandler(e.KymaError)
    def kyma_error(error: e.KymaError):  # type: ignore[no-untyped-def]
        status = int(status_of(error, "http"))
        if status >= 500:
            log.error("request failed: %s", error, exc_info=error)
        body = {"error": e.error_code(error), "message": str(error), "retryable": error.retryable}
        for detail in ("line", "field", "limit", "scope", "table"):
            if getattr(error, detail, None) is not None:
                body[detail] = getattr(error, detail)
        if status == 401:
            return jsonify(body), status, {"WWW-Authenticate": 'Bearer realm="kyma"'}
        if status in (429, 503):
            return jsonify(body), status, {"Retry-After": str(getattr(error, "retry_after", 1))}
        return jsonify(body), status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):  # type: ignore[no-untyped-def]
        body = {
            "error": (error.name or "error").lower().replace(" ", "_"),
            "message": _routing(error) or error.description,
            "retryable": False,
        }
        return jsonify(body), error.code or 500

    @app.errorhandler(Exception)
    def unexpected(error: Exception):  # type: ignore[no-untyped-def]
        log.exception("unexpected error")
        body = {
            "error": "internal_error",
            "message": "internal error; see the server log",
            "retryable": True,
        }
        return jsonify(body), 500


def _routing(error: HTTPException) -> str | None:
    """A request no route takes, said with its method and path (werkzeug's own words are
    for pages people browse)."""
    if isinstance(error, NotFound) and request.url_rule is None:
        return f"no endpoint {request.method} {request.path}: the HTTP API reference lists them"
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        allowed = [m for m in error.valid_methods if m not in ("HEAD", "OPTIONS")]
        return f"{request.method} is not allowed on {request.path}: use {' or '.join(allowed)}"
    return None
