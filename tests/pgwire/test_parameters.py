"""Parameters of every kind, sent by real clients (psycopg in text and binary formats,
node-postgres) to kyma and to a loopback Postgres (the oracle) with the same rows: the same
answers, or the same SQLSTATE."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.request
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pgwire_serve import PgServe
from psycopg.types.numeric import Float4

ROWS = [(1, "a", 0.5, True), (2, "b c", 2.5, False), (3, None, None, None)]
INSERT = "INSERT INTO p (n, msg, r, ok) VALUES (%s, %s, %s, %s)"
PARAMS = Path(__file__).parent / "node" / "params.js"


@pytest.fixture(scope="module")
def oracle(pg_server_url: str) -> Iterator[tuple[psycopg.Connection, str]]:
    """A schema of Postgres holding table ``p`` as kyma's; and that schema's name."""
    schema = f"params_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        conn.execute("CREATE TABLE p (n bigint, msg text, r float8, ok bool, v real[])")
        for row in ROWS:
            conn.execute(INSERT, row)
        yield conn, schema
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="module")
def kyma(pg: PgServe) -> Iterator[psycopg.Connection]:
    with pg.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE p (n long, msg string, r real, ok bool, v vector(3))")
        for row in ROWS:
            conn.execute(INSERT, row)
        yield conn


def _cell(value: Any) -> Any:
    if isinstance(value, int | Decimal) and not isinstance(value, bool):
        return Decimal(value).normalize()
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, list):
        return [_cell(v) for v in value]
    return value


def _answer(conn: psycopg.Connection, sql: str, params: tuple[Any, ...]) -> list[Any] | str:
    try:
        rows = conn.execute(sql, params).fetchall()  # type: ignore[arg-type]
    except psycopg.Error as error:
        assert error.sqlstate is not None
        return error.sqlstate
    return [tuple(_cell(v) for v in row) for row in rows]


# %s: text format, the type psycopg chose; %b: binary format.
QUERIES = [
    ("SELECT count(*) FROM p WHERE msg = ANY(%s::text[])", (["a", "b c"],)),
    ("SELECT count(*) FROM p WHERE msg = ANY(%s)", (["a", "b c", None],)),
    ("SELECT count(*) FROM p WHERE msg <> ALL(%s)", (["a"],)),
    ("SELECT n FROM p WHERE n = ANY(%s) ORDER BY n", ([1, 3],)),
    ("SELECT n FROM p WHERE n = ANY(%b) ORDER BY n", ([1, 3],)),
    ("SELECT n FROM p WHERE msg = ANY(%b) ORDER BY n", (["b c", "z"],)),
    ("SELECT %s::text[]", (['x,"y"', None, "NULL"],)),
    ("SELECT %b::text[]", (["x", None],)),
    ("SELECT %s::bigint + 1, %s::int * 2", (41, 20)),
    ("SELECT %b::bigint + 1, %b::int * 2", (41, 20)),
    ("SELECT %s::int + 1", (2147483647,)),
    ("SELECT %b::bigint + 1", (9223372036854775807,)),
    ("SELECT %s::int", ("abc",)),
    ("SELECT %b * 2, %b AND true, %s OR false", (1.5, True, False)),
    ("SELECT n FROM p WHERE r > %s ORDER BY n", (1.0,)),
    ("SELECT n FROM p WHERE r > %b ORDER BY n", (1.0,)),
    ("SELECT %s::numeric(4,1), %b::float8::int, %s::float8::int", (Decimal("2.25"), 2.5, 3.5)),
    # A float4 parameter is a real: with a numeric it is double precision, with a real a real.
    ("SELECT (%s + 0.2)::text, (%b * 2)::text", (Float4(0.1), Float4(0.1))),
    ("SELECT (%s / 3::real)::text, (%b / 3::real)::text", (Float4(1.0), Float4(1.0))),
]


@pytest.mark.parametrize(("sql", "params"), QUERIES, ids=[q for q, _ in QUERIES])
def test_psycopg_parameters_answer_as_postgres(
    kyma: psycopg.Connection,
    oracle: tuple[psycopg.Connection, str],
    sql: str,
    params: tuple[Any, ...],
) -> None:
    assert _answer(kyma, sql, params) == _answer(oracle[0], sql, params)


def test_psycopg_inserts_typed_parameters_and_a_vector_from_a_list(
    kyma: psycopg.Connection, oracle: tuple[psycopg.Connection, str]
) -> None:
    statements = [
        (INSERT, (10, "ten", 1, True)),
        ("INSERT INTO p (n, msg) VALUES (%b, %b)", (11, "eleven")),
        ("INSERT INTO p (n, v) VALUES (%s, %s)", (12, [1.0, 2.0, 3.0])),
        ("INSERT INTO p (n, v) VALUES (%b, %b)", (13, [0.5, 0.25, 0.0])),
        ("INSERT INTO p (n, r) VALUES (%s, %s)", (14, Decimal("1.25"))),
        ("INSERT INTO p (n, r) VALUES (%s::bigint, %s::float8)", ("15", "2.5")),
        ("INSERT INTO p (n) VALUES (%s)", ("sixteen",)),
    ]
    for sql, params in statements:
        assert (sql, _status(kyma, sql, params)) == (sql, _status(oracle[0], sql, params))
    select = "SELECT n, msg, r, ok, v FROM p WHERE n >= 10 ORDER BY n"
    assert _answer(kyma, select, ()) == _answer(oracle[0], select, ())


@pytest.mark.parametrize("binary", [False, True])
def test_a_real_result_is_float4_on_the_wire(
    kyma: psycopg.Connection, oracle: tuple[psycopg.Connection, str], binary: bool
) -> None:
    sql = "SELECT 1::real / 3::real, 1234567::real, (1::real + 1) / 3"
    answers = []
    for conn in (kyma, oracle[0]):
        with conn.cursor(binary=binary) as cur:
            rows = cur.execute(sql).fetchall()
            answers.append((rows, [c.type_code for c in cur.description or []]))
    assert answers[0] == answers[1]
    assert answers[0][1] == [700, 700, 701]


def _status(conn: psycopg.Connection, sql: str, params: tuple[Any, ...]) -> str:
    try:
        conn.execute(sql, params)  # type: ignore[arg-type]
    except psycopg.Error as error:
        return str(error.sqlstate)
    return "ok"


NODE = [
    ["INSERT INTO p (n, msg, r, ok) VALUES ($1, $2, $3, $4)", [20, "node", 2.5, True]],
    ["SELECT n, msg, r, ok FROM p WHERE n = $1", [20]],
    ["SELECT count(*) FROM p WHERE msg = ANY($1::text[])", [["a", "b c"]]],
    ["SELECT count(*) FROM p WHERE n = ANY($1::bigint[])", [[1, 2, 20]]],
    ["SELECT $1::bigint + 1 AS x", [41]],
    ["SELECT $1::int + 1 AS x", [2147483647]],
    ["SELECT $1::int AS x", ["abc"]],
    ["INSERT INTO p (n) VALUES ($1)", ["not a number"]],
]


def test_node_postgres_parameters_answer_as_postgres(
    pg: PgServe, kyma: psycopg.Connection, oracle: tuple[psycopg.Connection, str]
) -> None:
    conn, schema = oracle
    info = conn.info
    postgres = {
        "host": info.host,
        "port": info.port,
        "user": info.user,
        "database": info.dbname,
        "password": info.password or None,
        "options": f"-c search_path={schema}",
    }
    ours = {
        "host": "127.0.0.1",
        "port": pg.port,
        "user": "kyma",
        "database": "kyma",
        "password": pg.tokens["admin"],
    }
    assert _node(ours) == _node(postgres)


def _node(config: dict[str, Any]) -> list[dict[str, Any]]:
    assert (PARAMS.parent / "node_modules" / "pg").is_dir(), "run scripts/setup.sh (npm ci)"
    done = subprocess.run(
        [shutil.which("node") or "node", str(PARAMS), json.dumps(config), json.dumps(NODE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _plans(pg: PgServe, plan: str) -> float:
    """``kyma_query_plans_total{plan=…}`` from /metrics."""
    bearer = {"Authorization": f"Bearer {pg.tokens['admin']}"}
    request = urllib.request.Request(f"{pg.serve.url}/metrics", headers=bearer)
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    found = re.search(rf'^kyma_query_plans_total{{plan="{plan}"}} (\S+)', text, re.M)
    return float(found.group(1)) if found else 0.0


def test_prepared_statements_keep_their_plan(pg: PgServe, kyma: psycopg.Connection) -> None:
    """Parse/Bind/Execute and SQL PREPARE/EXECUTE with new parameters run the plan their
    first run made (the statement's shape: docs/operations/query-performance.md)."""
    expected = {1: [("a",)], 2: [("b c",)], 3: [(None,)], 4: []}
    before = _plans(pg, "shape")
    for n in (1, 2, 3, 4, 2):
        found = kyma.execute("SELECT msg FROM p WHERE n = %s", (n,), prepare=True).fetchall()
        assert found == expected[n], n
    kyma.execute("PREPARE by_n (bigint) AS SELECT msg FROM p WHERE n = $1")
    for n in (3, 1, 2):
        assert kyma.execute(f"EXECUTE by_n ({n})").fetchall() == expected[n], n
    kyma.execute("DEALLOCATE by_n")
    assert _plans(pg, "shape") - before >= 4 + 2  # all but the first run of each
