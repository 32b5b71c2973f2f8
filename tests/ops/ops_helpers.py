"""Helpers of the operations tests: a ``kyma serve`` on the session's Postgres, raw HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from serve_helpers import Serve, query, request  # noqa: F401  (shared by the ops tests)


def serve_on(catalog_url: str, home: Path, **env: str) -> Serve:
    """A real ``kyma serve`` on an existing catalog database (no initdb: a quick start)."""
    return Serve(home, KYMA_CATALOG_URL=catalog_url, **env)


def ingest(serve: Serve, table: str, rows: list[dict], key: str | None = None) -> dict:
    headers = {"X-Idempotency-Key": key} if key else {}
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    status, _, answer = request(f"{serve.url}/v1/ingest/{table}", body, headers)
    assert status == 200, answer
    return json.loads(answer)


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text (0 when absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def wait_until(check: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {timeout}s")
