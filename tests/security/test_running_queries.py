"""Running statements: each caller sees and stops their own, an admin sees and stops all, over
HTTP (``GET``/``DELETE /v1/queries``) and SQL (``KILL QUERY``) from any interface; the stopped
statement ends with 57014 (HTTP 409), and the query log says who stopped it."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest
from secure_serve import Secure

# A long join (minutes) over a table of one row: stopped long before it ends.
SLOW = (
    "SELECT count(*) FROM logs l, generate_series(1, 200000) a, generate_series(1, 200000) b"
    " WHERE a.value + b.value > length(l.msg)"
)


def _start(secure: Secure, token: str) -> tuple[threading.Thread, dict[str, Any]]:
    answer: dict[str, Any] = {}

    def run() -> None:
        answer["status"], answer["body"], _ = secure.sql(SLOW, secure.tokens[token])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, answer


def _listed(secure: Secure, token: str) -> list[dict[str, Any]]:
    status, body, _ = secure.call("/v1/queries", secure.tokens[token])
    assert status == 200, body
    return [q for q in body["queries"] if q["sql"] == SLOW]


def _running_id(secure: Secure) -> str:
    """The id of the slow statement, once an admin's listing shows it (within 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = _listed(secure, "admin")
        if found and found[0]["progress"]:  # listed, and past the pruning cascade
            return str(found[0]["id"])
        time.sleep(0.1)
    raise AssertionError("the slow statement was never listed")


def _pg(secure: Secure, token: str) -> psycopg.Connection:
    dsn = f"host=127.0.0.1 port={secure.serve.pg_port} user=kyma connect_timeout=10"
    return psycopg.connect(
        f"{dsn} sslmode=verify-full sslrootcert={secure.tls.ca}",
        password=secure.tokens[token],
        autocommit=True,
    )


def test_owner_sees_and_admin_stops_from_another_interface(secure: Secure) -> None:
    thread, answer = _start(secure, "read")
    statement = _running_id(secure)
    (mine,) = _listed(secure, "read")
    assert mine["id"] == statement and mine["client"] == "http"
    assert mine["principal"] == f"token {secure.token_ids['read']}"
    assert mine["elapsed_ms"] > 0 and mine["stopping"] is False
    assert mine["progress"]["extents_total"] == mine["progress"]["extents_after_catalog"] == 1
    assert _listed(secure, "read_logs") == []  # another caller's statement is not shown
    status, entry, _ = secure.call(f"/v1/queries/{statement}", secure.tokens["read"])
    assert status == 200 and entry["id"] == statement and entry["progress"]
    status, _, _ = secure.call(f"/v1/queries/{statement}", secure.tokens["read_logs"])
    assert status == 404
    # another non-admin may not stop it, by HTTP or in SQL
    path = f"/v1/queries/{statement}"
    status, body, _ = secure.call(path, secure.tokens["read_logs"], method="DELETE")
    assert status == 403 and "owner or an admin" in body["message"]
    status, body, _ = secure.sql(f"KILL QUERY '{statement}'", secure.tokens["read_logs"])
    assert status == 403
    assert thread.is_alive()
    # an admin stops it over the Postgres protocol
    with _pg(secure, "admin") as conn:
        assert conn.execute(f"KILL QUERY '{statement}'").fetchone() == (statement,)
    thread.join(10)
    assert not thread.is_alive()
    assert answer["status"] == 409, answer
    assert "stopped it" in answer["body"]["message"]
    logged = f"query {statement} of token {secure.token_ids['read']} (http) cancelled by token"
    assert logged in secure.serve.printed()  # the query log says who stopped it
    with _pg(secure, "admin") as conn:  # the server goes on; a second stop finds nothing
        assert conn.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.Error, match="no running statement"):
            conn.execute(f"KILL QUERY '{statement}'")
    status, _, _ = secure.call(path, secure.tokens["admin"], method="DELETE")
    assert status == 404


def test_owner_stops_their_own(secure: Secure) -> None:
    thread, answer = _start(secure, "read")
    statement = _running_id(secure)
    status, body, _ = secure.call(
        f"/v1/queries/{statement}", secure.tokens["read"], method="DELETE"
    )
    assert status == 202 and body == {"id": statement, "stopping": True}
    started = time.monotonic()
    thread.join(10)
    assert answer["status"] == 409 and time.monotonic() - started < 10
    assert _listed(secure, "admin") == []
