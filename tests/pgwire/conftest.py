"""One real ``kyma serve`` with auth required and the Postgres listener on a free loopback
port, for every test here. Tokens: ``admin`` (made with the CLI) and ``read_other``, a read
token limited to another table. Table ``events`` holds three rows of every column kind."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from serve_helpers import Serve, free_port, kyma

ROWS = [
    {
        "n": 1,
        "msg": "GET /",
        "ts": "2024-05-01T12:00:00.5Z",
        "attrs": {"http": {"method": "GET"}, "tags": ["a", "b"]},
        "emb": [0.5, 1.0, -2.0],
    },
    {"n": 2, "msg": "it's", "ts": "2024-05-01T12:00:01Z", "attrs": 42, "emb": [0.1, 0, 3]},
    {"n": 3, "msg": None, "ts": "2024-05-02T00:00:00Z", "attrs": None, "emb": None},
]


@dataclass
class PgServe:
    serve: Serve
    port: int
    tokens: dict[str, str]

    def dsn(self, token: str | None = None) -> str:
        password = f" password={token}" if token else ""
        return f"host=127.0.0.1 port={self.port} user=kyma dbname=kyma{password}"

    def connect(self, token: str = "admin", **kw) -> psycopg.Connection:  # type: ignore[no-untyped-def]
        return psycopg.connect(self.dsn(self.tokens[token]), connect_timeout=10, **kw)


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServe]:
    home = Path(tempfile.mkdtemp(prefix="kyma-pgwire-", dir="/tmp"))  # postgres reaches it
    port = free_port()
    serve = Serve(home, KYMA_AUTH="required", KYMA_PG_PORT=str(port))
    try:
        assert serve.pg_port == port, "".join(serve.output)
        created = kyma(home, "token", "create", "--scope", "admin", "--name", "pgwire")
        assert created.returncode == 0, created.stderr
        read_other = kyma(home, "token", "create", "--scope", "read", "--table", "other")
        assert read_other.returncode == 0, read_other.stderr
        pg = PgServe(
            serve, port, {"admin": created.stdout.strip(), "read_other": read_other.stdout.strip()}
        )
        with pg.connect(autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE events"
                " (n long, msg string, ts timestamp, attrs dynamic, emb vector(3))"
            )
        request = urllib.request.Request(
            f"{serve.url}/v1/ingest/events",
            data="\n".join(json.dumps(r) for r in ROWS).encode(),
            headers={"Authorization": f"Bearer {pg.tokens['admin']}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.load(answer)["rows"] == len(ROWS)
        yield pg
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)
    assert not re.search(r"Traceback", "".join(serve.output)), "".join(serve.output)
