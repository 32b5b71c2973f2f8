"""One real ``kyma serve`` per module with auth required and the Postgres listener on a free
loopback port; its catalog is a fresh database of the session's Postgres (no Postgres of its
own to initialize and start per module). Tokens: ``admin`` and ``read_other``, a read token
limited to another table. Table ``events`` holds three rows of every column kind."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pgwire_serve import ROWS, PgServe
from serve_helpers import Serve, free_port


@pytest.fixture(scope="module")
def pg(module_serve_catalog_url: str) -> Iterator[PgServe]:
    home = Path(tempfile.mkdtemp(prefix="kyma-pgwire-", dir="/tmp"))
    port = free_port()
    serve = Serve(
        home,
        KYMA_AUTH="required",
        KYMA_PG_PORT=str(port),
        KYMA_CATALOG_URL=module_serve_catalog_url,
    )
    try:
        assert serve.pg_port == port, "".join(serve.output)
        pg = PgServe(serve, port, {}, module_serve_catalog_url)
        pg.tokens["admin"] = pg.new_token(["admin"], name="pgwire")
        pg.tokens["read_other"] = pg.new_token(["read"], ["other"])
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


@pytest.fixture
def postgres(pg_server_url: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to the loopback Postgres: the oracle."""
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        yield conn
