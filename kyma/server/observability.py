"""GET /metrics, and a request id on every request: taken from ``X-Request-Id`` when it is a
sane token, else generated; returned in the answer's header and on every log line."""

from __future__ import annotations

import logging
import re
import time
import uuid

from flask import Blueprint, Flask, Response, current_app, g, request

from kyma.logs import request_id
from kyma.metrics import CONTENT_TYPE

blueprint = Blueprint("metrics", __name__)
log = logging.getLogger("kyma.http")
HEADER = "X-Request-Id"
_SANE = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")


@blueprint.get("/metrics")
def metrics():  # type: ignore[no-untyped-def]
    """Prometheus text format."""
    body = current_app.extensions["kyma"].metrics.render()
    return Response(body, headers={"Content-Type": CONTENT_TYPE})


def register(app: Flask) -> None:
    @app.before_request
    def start() -> None:
        given = request.headers.get(HEADER, "")
        rid = given if _SANE.fullmatch(given) else uuid.uuid4().hex
        g.kyma_request = (rid, request_id.set(rid), time.perf_counter())

    @app.after_request
    def finish(response: Response) -> Response:
        rid, _, started = g.kyma_request
        response.headers[HEADER] = rid
        log.info(
            "%s %s %d %.1f ms",
            request.method,
            request.path,
            response.status_code,
            (time.perf_counter() - started) * 1000,
        )
        metrics = current_app.extensions["kyma"].metrics
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        metrics.http_requests.labels(request.method, route, str(response.status_code)).inc()
        return response

    @app.teardown_request
    def end(_error: BaseException | None) -> None:
        started = g.pop("kyma_request", None)
        if started is not None:
            request_id.reset(started[1])
