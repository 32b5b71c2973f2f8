"""HTTP status codes for kyma's errors: chosen here, at the edge, and nowhere else."""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from kyma.engine import errors as e

log = logging.getLogger("kyma.server")

# First match wins: more specific classes first.
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (e.UnauthenticatedError, 401),
    (e.PermissionDeniedError, 403),
    (e.NotFoundError, 404),
    (e.QueryTimeoutError, 408),
    (e.LimitExceededError, 413),
    (e.TooManyQueriesError, 429),
    (e.IdempotencyKeyReusedError, 422),
    (e.IdempotencyInFlightError, 409),
    (e.AlreadyExistsError, 409),
    (e.CommitConflictError, 409),
    (e.StaleCommitError, 409),
    (e.CatalogUnavailableError, 503),
    (e.SourceUnreachableError, 502),
    (e.TlsFailedError, 502),
    (e.PoolExhaustedError, 503),
    (e.ConnectorDisabledError, 503),
    (e.ObjectStoreError, 503),
    (e.IngestError, 400),
    (e.SqlError, 400),
    (e.SchemaError, 400),
    (e.ConfigError, 400),
)


def register(app: Flask) -> None:
    @app.errorhandler(e.KymaError)
    def kyma_error(error: e.KymaError):  # type: ignore[no-untyped-def]
        status = next((s for cls, s in STATUS if isinstance(error, cls)), 500)
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
            "message": error.description,
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
