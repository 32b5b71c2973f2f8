"""INSERT over Flight SQL (ADBC) with a token that may only ingest into the table: it runs,
reports its row count, and still may not read the table or write another."""

from __future__ import annotations

import pytest
from secure_serve import Secure


def _insert(secure: Secure, token: str, sql: str, prepared: bool = False) -> int:
    with secure.adbc(token) as conn, conn.cursor() as cur:
        if prepared:
            cur.execute(sql, ("via flight, prepared",))
        else:
            cur.execute(sql)
        return int(cur.rowcount)


def _count(secure: Secure, msg: str) -> int:
    sql = f"SELECT count(*) FROM logs WHERE msg = '{msg}'"
    status, answer, _ = secure.sql(sql, secure.tokens["admin"])
    assert status == 200, answer
    return int(answer["rows"][0][0])


def test_an_ingest_token_inserts_over_flight_and_hears_the_row_count(secure: Secure) -> None:
    token = secure.tokens["ingest_logs"]
    sql = "INSERT INTO logs (msg) VALUES ('via flight'), ('via flight')"
    assert _insert(secure, token, sql) == 2
    assert _count(secure, "via flight") == 2
    prepared = "INSERT INTO logs (msg) VALUES (?)"
    assert _insert(secure, token, prepared, prepared=True) == 1
    assert _count(secure, "via flight, prepared") == 1


def test_an_ingest_token_still_may_not_read_or_write_elsewhere(secure: Secure) -> None:
    token = secure.tokens["ingest_logs"]
    with pytest.raises(Exception, match="'read'.*PermissionDenied"):
        _insert(secure, token, "SELECT msg FROM logs")
    with pytest.raises(Exception, match="'secrets'.*PermissionDenied"):
        _insert(secure, token, "INSERT INTO secrets (msg) VALUES ('no')")
    with pytest.raises(Exception, match="'ingest'.*PermissionDenied"):
        _insert(secure, secure.tokens["read_logs"], "INSERT INTO logs (msg) VALUES ('no')")
    assert _count(secure, "no") == 0
