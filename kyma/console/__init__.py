"""The web console: one page and its bundle, built from ``console/`` into ``static/``.

The page and its assets hold no data and need no token (with the health checks, the only
routes that do not): the page signs in by asking for a token, then every call it makes goes
to the HTTP API with ``Authorization: Bearer``. Live tail is ``tail.py``, its pub/sub
``live.py``.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, redirect, send_from_directory

STATIC = Path(__file__).parent / "static"
blueprint = Blueprint("console", __name__)


@blueprint.get("/")
def root():  # type: ignore[no-untyped-def]
    return redirect("/console/")


@blueprint.get("/console/")
def page():  # type: ignore[no-untyped-def]
    return _send("index.html")


@blueprint.get("/console/<path:asset>")
def asset(asset: str):  # type: ignore[no-untyped-def]
    return _send(asset)


def _send(name: str):  # type: ignore[no-untyped-def]
    response = send_from_directory(STATIC, name, max_age=0)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
    )
    return response
