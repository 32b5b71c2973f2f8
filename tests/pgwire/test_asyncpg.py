"""asyncpg against a real ``kyma serve``: it uses the extended protocol strictly (Parse,
Describe, then Bind with the parameter types the server described) and binary results."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from pgwire_serve import PgServe

UTC = dt.UTC


def run(pg: PgServe, body: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        conn = await asyncpg.connect(
            host="127.0.0.1",
            port=pg.port,
            user="kyma",
            database="kyma",
            password=pg.tokens["admin"],
            timeout=10,
        )
        try:
            return await body(conn)
        finally:
            await conn.close()

    return asyncio.run(main())


def test_asyncpg_reads_every_column_kind_in_binary(pg: PgServe) -> None:
    async def body(conn: asyncpg.Connection) -> Any:
        return await conn.fetch("SELECT n, msg, ts, attrs, emb FROM events ORDER BY n")

    rows = [tuple(r) for r in run(pg, body)]
    assert rows[0][:3] == (1, "GET /", dt.datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC))
    assert json.loads(rows[0][3]) == {"http": {"method": "GET"}, "tags": ["a", "b"]}
    assert rows[0][4] == pytest.approx([0.5, 1.0, -2.0])
    assert rows[1][3] == "42" and rows[1][4] == pytest.approx([0.1, 0.0, 3.0])
    assert rows[2] == (3, None, dt.datetime(2024, 5, 2, tzinfo=UTC), None, None)


def test_asyncpg_binds_typed_parameters(pg: PgServe) -> None:
    since = dt.datetime(2024, 5, 1, 12, 0, 1, tzinfo=UTC)

    async def body(conn: asyncpg.Connection) -> Any:
        by_number = await conn.fetch("SELECT msg FROM events WHERE n = $1", 2)
        by_time = await conn.fetch("SELECT n FROM events WHERE ts >= $1 ORDER BY n", since)
        by_text = await conn.fetchval("SELECT count(*) FROM events WHERE msg = $1", "it's")
        limited = await conn.fetch("SELECT n FROM events ORDER BY n LIMIT $1", 1)
        casted = await conn.fetchrow("SELECT $1::int AS i, $2::text AS s", 7, "x")
        return by_number, by_time, by_text, limited, casted

    by_number, by_time, by_text, limited, casted = run(pg, body)
    assert [r["msg"] for r in by_number] == ["it's"]
    assert [r["n"] for r in by_time] == [2, 3]
    assert by_text == 1
    assert [r["n"] for r in limited] == [1]
    assert (casted["i"], casted["s"]) == (7, "x")


def test_asyncpg_lists_tables_and_columns(pg: PgServe) -> None:
    async def body(conn: asyncpg.Connection) -> Any:
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
            "public",
        )
        columns = await conn.fetch(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_name = $1 ORDER BY ordinal_position",
            "events",
        )
        return tables, columns

    tables, columns = run(pg, body)
    assert "events" in [r["table_name"] for r in tables]
    assert [tuple(r) for r in columns][2:4] == [("n", "bigint"), ("msg", "text")]


def test_asyncpg_errors_keep_the_connection_usable(pg: PgServe) -> None:
    async def body(conn: asyncpg.Connection) -> Any:
        with pytest.raises(asyncpg.UndefinedTableError, match="no_such_table"):
            await conn.fetch("SELECT * FROM no_such_table WHERE n = $1", 1)
        return await conn.fetchval("SELECT count(*) FROM events")

    assert run(pg, body) == 3


def test_asyncpg_with_a_bad_token_is_refused(pg: PgServe) -> None:
    async def main() -> None:
        await asyncpg.connect(
            host="127.0.0.1", port=pg.port, user="kyma", password="kyma_wrong", timeout=10
        )

    with pytest.raises(asyncpg.InvalidPasswordError, match="unknown token"):
        asyncio.run(main())


def test_asyncpg_describes_what_execute_runs(pg: PgServe) -> None:
    """asyncpg describes each statement before it binds: EXECUTE's row description is that of
    the statement it runs (not "no data"), and an unknown name fails there with 26000."""

    async def body(conn: asyncpg.Connection) -> Any:
        await conn.execute("PREPARE plus_one (bigint) AS SELECT $1 + 1 AS x")
        rows = await conn.fetch("EXECUTE plus_one (41)")
        with pytest.raises(asyncpg.PostgresError) as missing:
            await conn.fetch("EXECUTE nope")
        return [tuple(r) for r in rows], missing.value.sqlstate

    assert run(pg, body) == ([(42,)], "26000")
