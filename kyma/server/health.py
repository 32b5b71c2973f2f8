"""Liveness and readiness."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid

from flask import Blueprint, current_app, jsonify

from kyma.engine.errors import KymaError
from kyma.engine.storage import ObjectStore

blueprint = Blueprint("health", __name__)
log = logging.getLogger("kyma.server")
READY_TIMEOUT_SECONDS = 5
PROBE_CACHE_SECONDS = 5


class _WriteProbe:
    """Whether the store takes a write: a small object put and deleted, at most once per
    ``PROBE_CACHE_SECONDS`` (readiness is polled often); the last failure is re-raised."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked: float = -PROBE_CACHE_SECONDS
        self._error: Exception | None = None

    def check(self, store: ObjectStore) -> None:
        with self._lock:
            if time.monotonic() - self._checked >= PROBE_CACHE_SECONDS:
                key = f"_readyz/{os.getpid()}-{uuid.uuid4().hex}"
                try:
                    store.put_bytes(key, b"ok")
                    store.delete(key)
                    self._error = None
                except Exception as e:
                    self._error = e
                self._checked = time.monotonic()
            if self._error is not None:
                raise self._error


def _store_writable(store: ObjectStore) -> None:
    probe = current_app.extensions.setdefault("kyma_write_probe", _WriteProbe())
    probe.check(store)


@blueprint.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    return jsonify({"status": "ok"})


@blueprint.get("/readyz")
def readyz():  # type: ignore[no-untyped-def]
    """Ready when the catalog answers ``SELECT 1`` (within 5 s) and the object store lists
    and takes a write; 503 names the parts that failed (``failed``) and why (``checks``)."""
    services = current_app.extensions["kyma"]
    checks: dict[str, str] = {}
    for name, check in (
        ("catalog", lambda: services.catalog.ping(timeout=READY_TIMEOUT_SECONDS)),
        ("object_store", lambda: _list_and_write(services.store)),
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


def _list_and_write(store: ObjectStore) -> None:
    next(iter(store.list("tables/")), None)
    _store_writable(store)
