"""INSERT over Flight SQL (ADBC) with a token that may only ingest into the table: it runs,
reports its row count, and still may not read the table or write another. The table and the
token are this module's own (the shared tables' rows are counted elsewhere)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from secure_serve import Secure


@pytest.fixture(scope="module")
def ingest_token(secure: Secure) -> str:
    admin = secure.tokens["admin"]
    status, answer, _ = secure.sql("CREATE TABLE flight_writes (msg string)", admin)
    assert status == 200, answer
    grant = {"scopes": ["ingest"], "tables": ["flight_writes"], "name": "flight_writes"}
    status, answer, _ = secure.call("/v1/tokens", admin, body=grant)
    assert status == 201, answer
    return str(answer["token"])


def _insert(secure: Secure, token: str, sql: str, prepared: bool = False) -> int:
    with secure.adbc(token) as conn, conn.cursor() as cur:
        if prepared:
            cur.execute(sql, ("via flight, prepared",))
        else:
            cur.execute(sql)
        return int(cur.rowcount)


def _count(secure: Secure, msg: str) -> int:
    sql = f"SELECT count(*) FROM flight_writes WHERE msg = '{msg}'"
    status, answer, _ = secure.sql(sql, secure.tokens["admin"])
    assert status == 200, answer
    return int(answer["rows"][0][0])


def test_an_ingest_token_inserts_over_flight_and_hears_the_row_count(
    secure: Secure, ingest_token: str
) -> None:
    sql = "INSERT INTO flight_writes (msg) VALUES ('via flight'), ('via flight')"
    assert _insert(secure, ingest_token, sql) == 2
    assert _count(secure, "via flight") == 2
    prepared = "INSERT INTO flight_writes (msg) VALUES (?)"
    assert _insert(secure, ingest_token, prepared, prepared=True) == 1
    assert _count(secure, "via flight, prepared") == 1


def test_an_ingest_token_still_may_not_read_or_write_elsewhere(
    secure: Secure, ingest_token: str
) -> None:
    with pytest.raises(Exception, match="'read'.*PermissionDenied"):
        _insert(secure, ingest_token, "SELECT msg FROM flight_writes")
    with pytest.raises(Exception, match="'logs'.*PermissionDenied"):
        _insert(secure, ingest_token, "INSERT INTO logs (msg) VALUES ('no')")
    with pytest.raises(Exception, match="'ingest'.*PermissionDenied"):
        _insert(secure, secure.tokens["read"], "INSERT INTO flight_writes (msg) VALUES ('no')")
    assert _count(secure, "no") == 0


def _ingest(secure: Secure, token: str, table: str, mode: str, rows: list[str]) -> int:
    data = pa.table({"msg": pa.array(rows, pa.string())})
    with secure.adbc(token) as conn, conn.cursor() as cur:
        return int(cur.adbc_ingest(table, data, mode=mode))


def test_bulk_ingest_needs_the_ingest_scope_and_replace_admin(
    secure: Secure, ingest_token: str
) -> None:
    """ADBC ``adbc_ingest`` over TLS: a read token is refused (42501's PERMISSION_DENIED) and
    writes nothing; a token that may ingest into the table appends and hears the count, but
    may not replace its rows; an admin token may."""
    with pytest.raises(Exception, match="'ingest'.*PermissionDenied"):
        _ingest(secure, secure.tokens["read"], "flight_writes", "append", ["no"])
    with pytest.raises(Exception, match="'ingest'.*PermissionDenied"):  # nor create one
        _ingest(secure, secure.tokens["read"], "made_by_read", "create", ["no"])
    assert _count(secure, "no") == 0
    assert _ingest(secure, ingest_token, "flight_writes", "append", ["bulk", "bulk"]) == 2
    assert _count(secure, "bulk") == 2
    with pytest.raises(Exception, match="'admin'.*PermissionDenied"):
        _ingest(secure, ingest_token, "flight_writes", "replace", ["gone"])
    assert _count(secure, "bulk") == 2
    admin = secure.tokens["admin"]
    assert _ingest(secure, admin, "flight_replaced", "create", ["old", "old"]) == 2
    assert _ingest(secure, admin, "flight_replaced", "replace", ["new"]) == 1
    status, answer, _ = secure.sql("SELECT msg FROM flight_replaced", admin)
    assert status == 200 and answer["rows"] == [["new"]], answer
