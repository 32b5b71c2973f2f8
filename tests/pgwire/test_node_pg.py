"""node-postgres (npm ``pg``, installed by scripts/setup.sh) against a real ``kyma serve``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pgwire_serve import LONG_QUERY, PgServe

CLIENT = Path(__file__).parent / "node" / "client.js"


def node(pg: PgServe, token: str, *cancel: str) -> dict[str, Any]:
    assert (CLIENT.parent / "node_modules" / "pg").is_dir(), "run scripts/setup.sh (npm ci)"
    done = subprocess.run(
        [shutil.which("node") or "node", str(CLIENT), str(pg.port), token, *cancel],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_node_postgres_lists_queries_and_reads_every_kind(pg: PgServe) -> None:
    answer = node(pg, pg.tokens["admin"])
    assert "events" in answer["tables"]
    assert answer["columns"][2:4] == [
        {"column_name": "n", "data_type": "bigint"},
        {"column_name": "msg", "data_type": "text"},
    ]
    assert answer["types"] == [20, 25, 1184, 3802, 1021]
    first, second, third = answer["rows"]
    assert first == {
        "n": "1",  # node-postgres reads int8 as a string
        "msg": "GET /",
        "ts": "2024-05-01T12:00:00.500Z",
        "attrs": {"http": {"method": "GET"}, "tags": ["a", "b"]},
        "emb": [0.5, 1, -2],
    }
    assert second["attrs"] == 42 and second["emb"] == [0.1, 0, 3]
    assert third["msg"] is None and third["attrs"] is None
    assert answer["error"]["code"] == "42P01" and "no_such_table" in answer["error"]["message"]
    assert answer["after"] == [{"c": "3"}]


def test_node_postgres_with_a_bad_token_is_refused(pg: PgServe) -> None:
    answer = node(pg, "kyma_wrong")
    assert answer["code"] == "28P01" and "unknown token" in answer["connectError"]


def test_node_postgres_cancels_a_long_query(pg: PgServe) -> None:
    answer = node(pg, pg.tokens["admin"], LONG_QUERY)
    assert answer["error"]["code"] == "57014", answer
    assert "user request" in answer["error"]["message"]
    assert answer["seconds"] < 15
    assert answer["after"] == [{"c": "3"}]
