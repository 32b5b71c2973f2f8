"""Auth off: the Postgres listener trusts its (loopback) clients, as the HTTP API does."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from decimal import Decimal
from pathlib import Path

import psycopg
from serve_helpers import Serve, free_port


def test_without_auth_a_loopback_client_needs_no_password() -> None:
    home = Path(tempfile.mkdtemp(prefix="kyma-pgwire-trust-", dir="/tmp"))
    port = free_port()
    serve = Serve(home, KYMA_PG_PORT=str(port))
    try:
        assert f"Postgres      postgresql://127.0.0.1:{port}" in "".join(serve.output)
        dsn = f"host=127.0.0.1 port={port} user=anyone dbname=kyma connect_timeout=10"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (x real, b bool, v vector(2))")
            assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
            assert conn.execute("SELECT current_user").fetchone() == ("anyone",)
            cur = conn.execute("SELECT 1.5 AS x, true AS b, 7 AS i")
            assert cur.fetchone() == (1.5, True, 7)
            assert [c.type_code for c in cur.description] == [701, 16, 20]
            cur = conn.execute(
                "SELECT INTERVAL '1 day 2 hours' AS i, CAST(1.5 AS DECIMAL(10, 2)) AS d,"
                " DATE '2024-01-31' AS day, ARRAY['a b', NULL] AS texts"
            )
            assert cur.fetchone() == (
                dt.timedelta(days=1, hours=2),
                Decimal("1.50"),
                dt.date(2024, 1, 31),
                ["a b", None],
            )
            assert [c.type_code for c in cur.description] == [1186, 1700, 1082, 1009]
    finally:
        code = serve.stop()
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)
