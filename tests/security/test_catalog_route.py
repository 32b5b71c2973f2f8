"""Statements that name Postgres' catalog take the one path every statement takes: the
same statement with and without a catalog relation or function (or with its name in a
comment) gets the same refusal from a real ``kyma serve`` — size guards, the memory
estimates, the IN-list limit — and the server stays up and small."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Serve, query, request

MEMORY_LIMIT = 256 << 20  # KYMA_QUERY_MEMORY_BYTES of the server under test
PEAK_BOUND = 1536 << 20  # the server's VmHWM after every case, in bytes
IN_LIST = ", ".join(str(n) for n in range(50_000))


@pytest.fixture(scope="module")
def serve(module_catalog_url: str) -> Iterator[Serve]:
    home = Path(tempfile.mkdtemp(prefix="kyma-catalog-route-", dir="/tmp"))
    server = Serve(
        home,
        KYMA_CATALOG_URL=module_catalog_url,
        KYMA_QUERY_MEMORY_BYTES=str(MEMORY_LIMIT),
        KYMA_QUERY_TIMEOUT_SECONDS="30",
        KYMA_MAX_IN_LIST_VALUES="10000",
    )
    try:
        yield server
    finally:
        code = server.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(server.output)


def _peak(serve: Serve) -> int:
    for line in Path(f"/proc/{serve.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize(
    ("plain", "catalog", "status", "limit"),
    [
        (
            "SELECT length(repeat('x', 600000000)) AS n",
            "SELECT length(repeat('x', 600000000)) AS n, version()",
            413,
            "query_memory_bytes",
        ),
        (
            "SELECT count(*) FROM generate_series(1, 1e10)",
            "SELECT count(*) FROM generate_series(1, 1e10) -- pg_class",
            413,
            "query_memory_bytes",
        ),
        (
            f"SELECT 1 AS x WHERE 1 IN ({IN_LIST})",
            f"SELECT relname FROM pg_class WHERE oid IN ({IN_LIST})",
            400,
            "max_in_list_values",
        ),
    ],
    ids=["repeat and version()", "generate_series and a comment", "IN list over pg_class"],
)
def test_a_catalog_statement_is_refused_as_any_other(
    serve: Serve, plain: str, catalog: str, status: int, limit: str
) -> None:
    for statement in (plain, catalog):
        answer_status, _, body = query(serve, statement)
        assert (answer_status, body.get("limit")) == (status, limit), body
    assert serve.proc.poll() is None
    assert request(f"{serve.url}/healthz", timeout=5)[0] == 200
    assert _peak(serve) < PEAK_BOUND, f"VmHWM {_peak(serve)} bytes"


def test_catalog_statements_still_answer(serve: Serve) -> None:
    status, _, body = query(serve, "SELECT version() AS v, current_schema()")
    assert status == 200, body
    assert body["rows"][0][0].startswith("PostgreSQL 15.0 (kyma ")
    assert body["rows"][0][1] == "public"
    status, _, body = query(serve, "SELECT count(*) AS n FROM pg_type WHERE typname = 'int8'")
    assert (status, body["rows"]) == (200, [[1]]), body
