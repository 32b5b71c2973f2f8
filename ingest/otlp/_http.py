"""OTLP/HTTP: ``POST /v1/logs``, ``/v1/traces``, ``/v1/metrics`` in protobuf or JSON.

The answer has the request's content type: the Export response, or on failure a
``google.rpc.Status`` with the status code ``_status`` chose. ``Content-Encoding: gzip``
bodies are accepted.
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING

import grpc
from flask import Flask, Response, request
from google.rpc.status_pb2 import Status
from werkzeug.exceptions import HTTPException

from kyma.engine.errors import IngestError, LimitExceededError
from kyma.ingest.listener import HttpListener

from ._codec import decode_json, encode_json
from ._signals import SIGNALS
from ._status import status_of

if TYPE_CHECKING:
    from ._options import OtlpOptions
    from ._receiver import OtlpReceiver

log = logging.getLogger("kyma.ingest.otlp")
PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def create_http_app(receiver: OtlpReceiver, max_body_bytes: int) -> Flask:
    app = Flask("kyma.otlp")
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes

    @app.post("/v1/<name>")
    def export(name: str) -> Response:
        signal = SIGNALS.get(name)
        if signal is None:
            return _status_response(404, grpc.StatusCode.NOT_FOUND, f"no OTLP path /v1/{name}")
        content_type = request.mimetype
        if content_type not in (PROTOBUF, JSON):
            return _status_response(
                415,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Content-Type must be {PROTOBUF} or {JSON}, got {content_type!r}",
            )
        try:
            receiver.authorize(signal, request.headers.get("Authorization"))
            body = _body(max_body_bytes)
            if content_type == PROTOBUF:
                return Response(
                    receiver.export(signal, signal.read(body), len(body)).SerializeToString(),
                    200,
                    content_type=PROTOBUF,
                )
            part = signal.read_message(decode_json(signal.request, body))
            return Response(
                encode_json(receiver.export(signal, part, len(body))), 200, content_type=JSON
            )
        except Exception as e:
            code, http = status_of(e)
            if http == 500:
                log.exception("OTLP/HTTP %s export failed", name)
            answer = _status_response(http, code, str(e), content_type)
            if http == 401:
                answer.headers["WWW-Authenticate"] = 'Bearer realm="kyma"'
            return answer

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Response:  # 405, 413 from werkzeug, unknown paths
        return _status_response(
            e.code or 500, grpc.StatusCode.INVALID_ARGUMENT, e.description or e.name
        )

    return app


def _body(limit: int) -> bytes:
    body = request.get_data(cache=False)
    encoding = request.headers.get("Content-Encoding", "identity").lower()
    if encoding == "identity":
        return body
    if encoding != "gzip":
        raise IngestError(f"Content-Encoding must be gzip or identity, got {encoding!r}")
    inflate = zlib.decompressobj(wbits=31)
    try:
        plain = inflate.decompress(body, limit + 1)
    except zlib.error as e:
        raise IngestError(f"the gzip body is corrupt: {e}") from e
    if len(plain) > limit:
        raise LimitExceededError(
            f"the body is over {limit} bytes once decompressed", "KYMA_MAX_BODY_BYTES"
        )
    return plain


def _status_response(
    http: int, code: grpc.StatusCode, message: str, content_type: str = JSON
) -> Response:
    status = Status(code=code.value[0], message=message)
    if content_type == PROTOBUF:
        return Response(status.SerializeToString(), http, content_type=PROTOBUF)
    return Response(encode_json(status), http, content_type=JSON)


def start_http_server(receiver: OtlpReceiver, options: OtlpOptions) -> HttpListener:
    return HttpListener(
        create_http_app(receiver, options.max_body_bytes),
        options.host,
        options.http_port,
        setting="KYMA_OTLP_HTTP_PORT",
        threads=options.threads,
        tls=options.tls,
        name="otlp-http",
    )
