"""Small helpers for tests that talk to the HTTP API through Flask's test client."""

from __future__ import annotations

import json


def sql(client, text: str, status: int = 200, **extra) -> dict:  # type: ignore[no-untyped-def]
    """POST /v1/query; assert the status; the JSON answer."""
    answer = client.post("/v1/query", json={"sql": text, **extra})
    assert answer.status_code == status, answer.get_json()
    return answer.get_json()


def post_lines(client, table: str, lines: list, status: int = 200, **kw) -> dict:  # type: ignore[no-untyped-def]
    """POST /v1/ingest/<table> with one line per item (dicts become JSON); the JSON answer."""
    body = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    answer = client.post(f"/v1/ingest/{table}", data=body.encode(), **kw)
    assert answer.status_code == status, answer.get_json()
    return answer.get_json()
