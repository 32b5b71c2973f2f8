"""psycopg 3 against a real ``kyma serve`` over the Postgres protocol: types, parameters,
errors that leave the connection usable, session statements, auth by token."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from decimal import Decimal

import psycopg
import pytest
from pgwire_serve import PgServe

UTC = dt.UTC


def test_select_returns_values_with_postgres_types(pg: PgServe) -> None:
    with pg.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT n, msg, ts, attrs, emb FROM events ORDER BY n")
        rows = cur.fetchall()
        oids = [c.type_code for c in cur.description]
    assert oids == [20, 25, 1184, 3802, 1021]  # int8, text, timestamptz, jsonb, real[]
    assert rows == [
        (
            1,
            "GET /",
            dt.datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC),
            {"http": {"method": "GET"}, "tags": ["a", "b"]},
            [0.5, 1.0, -2.0],
        ),
        (2, "it's", dt.datetime(2024, 5, 1, 12, 0, 1, tzinfo=UTC), 42, [0.1, 0.0, 3.0]),
        (3, None, dt.datetime(2024, 5, 2, tzinfo=UTC), None, None),
    ]


def test_parameters_bind_as_values_not_sql(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        found = conn.execute(
            "SELECT n FROM events WHERE msg = %s OR n > %s ORDER BY n", ("it's", 2)
        ).fetchall()
        assert found == [(2,), (3,)]
        assert conn.execute("SELECT %s AS a", ("'; DROP TABLE events; --",)).fetchone() == (
            "'; DROP TABLE events; --",
        )
        assert conn.execute("SELECT count(*) AS c FROM events").fetchone() == (3,)


@pytest.mark.parametrize("autocommit", [True, False])
def test_an_error_answers_with_sqlstate_and_the_connection_goes_on(
    pg: PgServe, autocommit: bool
) -> None:
    with pg.connect(autocommit=autocommit) as conn:
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SELECT n FROM no_such_table")
        assert raised.value.sqlstate == "42P01"
        assert "no_such_table" in str(raised.value)
        if not autocommit:
            with pytest.raises(psycopg.errors.InFailedSqlTransaction):
                conn.execute("SELECT 1 AS one")
            conn.rollback()
        assert conn.execute("SELECT max(n) AS m FROM events").fetchone() == (3,)


def test_syntax_error_is_an_error_response(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SELECT (1 FROM events")
        assert raised.value.sqlstate == "42601"  # syntax_error
        assert conn.execute("SELECT 2 AS two").fetchone() == (2,)


def test_session_statements_drivers_send(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        version = conn.execute("SELECT version()").fetchone()[0]
        assert version.startswith("PostgreSQL 15.0 (kyma ")
        assert conn.execute("SELECT current_schema()").fetchone() == ("public",)
        conn.execute("SET application_name = 'pgwire-test'")
        conn.execute("SET extra_float_digits TO 3")
        conn.execute("SET TIME ZONE 'UTC'")
        assert conn.execute("SHOW application_name").fetchone() == ("pgwire-test",)
        assert conn.info.parameter_status("application_name") == "pgwire-test"
        assert conn.execute("SHOW TimeZone").fetchone() == ("UTC",)
        conn.execute("BEGIN")
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (3,)
        conn.execute("COMMIT")
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SET no_such_setting = 1")
        assert raised.value.sqlstate == "42704"  # undefined_object, as Postgres answers
        assert "no_such_setting" in str(raised.value)


def test_a_transaction_of_reads_commits(pg: PgServe) -> None:
    with pg.connect() as conn:  # psycopg sends BEGIN first, COMMIT at the end
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (3,)
        conn.commit()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_bad_token_fails_to_connect(pg: PgServe) -> None:
    with pytest.raises(psycopg.OperationalError, match="unknown token"):
        psycopg.connect(pg.dsn("kyma_not-a-token"), connect_timeout=10)
    with pg.connect() as conn:  # the server goes on
        assert conn.execute("SELECT 1 AS one").fetchone() == (1,)


def test_a_token_without_the_table_is_refused(pg: PgServe) -> None:
    with pg.connect("read_other", autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SELECT n FROM events")
        assert raised.value.sqlstate == "42501"
        assert "may not read table 'events'" in str(raised.value)


def test_information_schema_lists_tables_and_columns(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name, table_type FROM information_schema.tables"
            " WHERE table_schema = 'public' ORDER BY table_name"
        ).fetchall()
        assert ("public", "events", "BASE TABLE") in tables
        columns = conn.execute(
            "SELECT column_name, data_type, udt_name FROM information_schema.columns"
            " WHERE table_name = %s ORDER BY ordinal_position",
            ("events",),
        ).fetchall()
    assert columns == [
        ("_timestamp", "timestamp with time zone", "timestamptz"),  # every table has these
        ("props", "jsonb", "jsonb"),
        ("n", "bigint", "int8"),
        ("msg", "text", "text"),
        ("ts", "timestamp with time zone", "timestamptz"),
        ("attrs", "jsonb", "jsonb"),
        ("emb", "ARRAY", "_float4"),
    ]


def test_information_schema_shows_only_granted_tables(pg: PgServe) -> None:
    with pg.connect("read_other", autocommit=True) as conn:
        names = conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
        assert ("events",) not in names
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SELECT * FROM information_schema.routines")
        assert "information_schema.routines is not available" in str(raised.value)


def test_prepared_statements_and_row_limited_fetches(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        for n in (1, 2, 1):  # Parse once with a name, then Bind/Execute it again
            cur = conn.execute("SELECT n, msg FROM events WHERE n = %s", (n,), prepare=True)
            assert cur.fetchall() == [(n, "GET /" if n == 1 else "it's")]
        assert conn.execute("SELECT n FROM events WHERE n > %(m)s", {"m": 1}).rowcount == 2


def test_binary_results_and_binary_parameters(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        text = conn.execute("SELECT n, msg, ts, attrs, emb FROM events ORDER BY n").fetchall()
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT n, msg, ts, attrs, emb FROM events ORDER BY n")
            assert cur.pgresult.fformat(0) == 1  # the server really sent binary
            rows = cur.fetchall()
            assert [r[:4] for r in rows] == [r[:4] for r in text]
            assert rows[1][4] == pytest.approx([0.1, 0.0, 3.0])  # real: float4 precision
            since = dt.datetime(2024, 5, 1, 12, 0, 1, tzinfo=UTC)
            cur.execute("SELECT n FROM events WHERE n > %b AND ts >= %b ORDER BY n", (1, since))
            assert cur.fetchall() == [(2,), (3,)]
        cur = conn.execute(
            "SELECT CAST(-12.50 AS DECIMAL(10, 2)) AS d, DATE '2024-01-31' AS day,"
            " INTERVAL '1 day 2 hours' AS i, true AS b, 1.5 AS f, ARRAY['a b', NULL] AS texts",
            binary=True,
        )
        assert cur.fetchone() == (
            Decimal("-12.50"),
            dt.date(2024, 1, 31),
            dt.timedelta(days=1, hours=2),
            True,
            1.5,
            ["a b", None],
        )
        assert conn.execute("SELECT %b::numeric AS d", (Decimal("0.0001"),)).fetchone() == (
            Decimal("0.0001"),
        )


def test_copy_to_stdout_in_text_format(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn, conn.cursor() as cur:
        with cur.copy("COPY (SELECT n, msg, emb FROM events ORDER BY n) TO STDOUT") as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        assert data.decode().splitlines() == [
            "1\tGET /\t{0.5,1,-2}",
            "2\tit's\t{0.1,0,3}",
            "3\t\\N\t\\N",
        ]
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="POST /v1/ingest"):
            cur.execute("COPY events FROM STDIN")
        assert cur.execute("SELECT count(*) FROM events").fetchone() == (3,)


def test_pg_catalog_describes_columns(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        columns = conn.execute(
            "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnum"
            " FROM pg_catalog.pg_attribute a"
            " JOIN pg_catalog.pg_class c ON c.oid = a.attrelid"
            " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relname = 'events' AND n.nspname = 'public' AND NOT a.attisdropped"
            " ORDER BY a.attnum"
        ).fetchall()
        assert [(name, kind) for name, kind, _ in columns][2:] == [
            ("n", "bigint"),
            ("msg", "text"),
            ("ts", "timestamp with time zone"),
            ("attrs", "jsonb"),
            ("emb", "real[]"),
        ]
        assert conn.execute("SELECT 'pg_class' AS word").fetchone() == ("pg_class",)


def test_json_operators_and_show_columns(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        methods = conn.execute(
            "SELECT n, attrs -> 'http' ->> 'method' AS m FROM events ORDER BY n"
        ).fetchall()
        assert methods == [(1, "GET"), (2, None), (3, None)]
        found = conn.execute(
            "SELECT n FROM events WHERE attrs->'http'->>'method' = %s", ("GET",)
        ).fetchall()
        assert found == [(1,)]
        columns = conn.execute("SHOW COLUMNS FROM events").fetchall()
        assert [(name, kind) for name, kind, *_ in columns][2:] == [
            ("n", "long"),
            ("msg", "string"),
            ("ts", "timestamp"),
            ("attrs", "dynamic"),
            ("emb", "vector(3)"),
        ]


def test_schema_names_and_search_path(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        count = "SELECT count(*) FROM events"
        assert conn.execute("SELECT count(*) FROM public.events").fetchone() == (3,)
        assert conn.execute("SELECT count(*) FROM kyma.public.events").fetchone() == (3,)
        for path in ("public", '"$user", public', "'$user', public"):
            conn.execute(f"SET search_path = {path}")
            assert conn.execute(count).fetchone() == (3,)
        conn.execute("SET search_path = nosuch")  # accepted, as Postgres accepts it
        with pytest.raises(psycopg.errors.UndefinedTable, match='relation "events" does not'):
            conn.execute(count)
        assert conn.execute("SELECT count(*) FROM public.events").fetchone() == (3,)
        with pytest.raises(psycopg.errors.UndefinedTable, match='relation "nosuch.events"'):
            conn.execute("SELECT * FROM nosuch.events")
        with pytest.raises(psycopg.errors.InvalidSchemaName, match='schema "nosuch"'):
            conn.execute("CREATE TABLE nosuch.t (v bigint)")


def test_jsonb_text_and_paths(pg: PgServe) -> None:
    with pg.connect(autocommit=True) as conn:
        rows = conn.execute("SELECT attrs::text FROM events ORDER BY n").fetchall()
        assert rows == [('{"http": {"method": "GET"}, "tags": ["a", "b"]}',), ("42",), (None,)]
        paths = conn.execute("SHOW PATHS FROM events.attrs").fetchall()
        assert [row[0] for row in paths] == ["{http}", "{http,method}", "{tags}"]


class _RawText(psycopg.adapt.Loader):
    """A float as the text the server sent."""

    def load(self, data: bytes) -> str:  # type: ignore[override]
        return bytes(data).decode()


FLOAT_TEXTS = [
    "2", "0.1", "-0", "1e20", "1.5e-7", "1e-5", "0.0001", "123456789012345.6", "1e15",
    "9.999999e15", "1e16", "1e17", "5e22", "9.5e21", "5e-324", "1.7976931348623157e308",
    "NaN", "Infinity", "-Infinity", "0.30000000000000004", "-2.5e-300",
]  # fmt: skip


def test_float_columns_go_on_the_wire_as_postgres_writes_them(
    pg: PgServe, pg_server_url: str
) -> None:
    rows = ", ".join(f"({i}, '{t}')" for i, t in enumerate(FLOAT_TEXTS))
    sql = f"SELECT CAST(v AS DOUBLE PRECISION) FROM (VALUES {rows}) AS t(i, v) ORDER BY i"
    answers = []
    for connect in (pg.connect, lambda: psycopg.connect(pg_server_url)):
        with connect() as conn:
            conn.adapters.register_loader("float8", _RawText)
            answers.append(conn.execute(sql).fetchall())  # type: ignore[call-overload]
    assert answers[0] == answers[1]


QUOTIENTS = (
    "SELECT i, x / y AS q, avg(x) OVER (ORDER BY i) FROM (VALUES"
    " (1, CAST('14836.00' AS numeric(9, 2)), CAST('572' AS numeric(9, 2))),"
    " (2, 1, 3), (3, -2, 3), (4, 0.0001, 3), (5, 6, 5), (6, 1.2, 1), (7, NULL, 1)) AS t(i, x, y)"
    " ORDER BY i"
)


def test_numeric_quotient_columns_go_on_the_wire_with_each_value_s_scale(
    pg: PgServe, pg_server_url: str
) -> None:
    """Text and binary: the numeric type and Postgres's digits (``25.9370629370629371``,
    not one scale of 20 decimals for the whole column)."""
    answers = []
    for connect in (pg.connect, lambda: psycopg.connect(pg_server_url)):
        with connect() as conn:
            for binary in (False, True):
                cur = conn.cursor(binary=binary).execute(QUOTIENTS)
                oids = [c.type_code for c in cur.description]
                rows = [tuple(str(v) for v in row) for row in cur.fetchall()]
                answers.append((oids, rows))
    assert all(oids[1:] == [1700, 1700] for oids, _ in answers)  # numeric
    assert answers[0][1][0][1] == "25.9370629370629371"
    assert [rows for _, rows in answers[:2]] == [rows for _, rows in answers[2:]]
    # over HTTP: JSON numbers with Postgres's digits
    request = urllib.request.Request(
        f"{pg.serve.url}/v1/query",
        data=json.dumps({"sql": QUOTIENTS}).encode(),
        headers={"Authorization": f"Bearer {pg.tokens['admin']}"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        body = answer.read().decode()
    assert json.loads(body)["columns"][1] == {"name": "q", "type": "numeric"}
    written = [row[1] for row in answers[2][1]]  # Postgres's, text format
    assert f"[1,{written[0]},{answers[2][1][0][2]}]" in body, body
    assert "25.93706293706293710000" not in body


REAL_DDL = "CREATE TABLE reals (i bigint, x real, y float4, z float(10))"
REAL_COPY = "1\t0.1\t0.2\t1e-40\n2\tNaN\t-Infinity\t3.4028235e38\n3\t1234567.9\t\\N\t-0\n"


def _http(pg: PgServe, path: str, body: bytes) -> tuple[int, dict]:  # type: ignore[type-arg]
    request = urllib.request.Request(
        f"{pg.serve.url}{path}",
        data=body,
        headers={"Authorization": f"Bearer {pg.tokens['admin']}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def test_a_real_column_over_copy_the_wire_and_http(pg: PgServe, catalog_url: str) -> None:
    """``real`` columns made by DDL and loaded by COPY: type float4 (OID 700) in text and
    binary format with Postgres's text; out-of-range COPY and ingest values refused; HTTP
    JSON with float4's shortest digits."""
    sql = "SELECT i, x, y, z, x * 3 AS t FROM reals ORDER BY i"
    answers = []
    for connect in (
        lambda: pg.connect(autocommit=True),
        lambda: psycopg.connect(catalog_url, autocommit=True),
    ):
        with connect() as conn:
            conn.execute(REAL_DDL)
            with conn.cursor().copy("COPY reals FROM STDIN") as copy:
                copy.write(REAL_COPY)
            refused = pytest.raises(psycopg.errors.NumericValueOutOfRange)
            with refused, conn.cursor().copy("COPY reals FROM STDIN") as copy:
                copy.write("4\t1\t1e40\t1\n")
            conn.adapters.register_loader("float4", _RawText)
            conn.adapters.register_loader("float8", _RawText)
            text = conn.execute(sql)
            binary = conn.cursor(binary=True).execute(sql)
            answers.append(
                (
                    [c.type_code for c in text.description],
                    text.fetchall(),
                    [tuple(str(v) for v in row) for row in binary.fetchall()],
                )
            )
    assert answers[0][0][1:] == [700, 700, 700, 701]
    assert answers[0] == answers[1]
    status, body = _http(pg, "/v1/query", json.dumps({"sql": sql}).encode())
    assert status == 200, body
    assert [c["type"] for c in body["columns"][1:4]] == ["float4"] * 3  # kyma's name
    assert body["rows"][0][1:] == [0.1, 0.2, 1e-40, 0.30000000447034836]
    ingested = b'{"i": 5, "x": 0.5}\n{"i": 6, "x": 2.5, "y": 1e39}\n'
    status, body = _http(pg, "/v1/ingest/reals", ingested)
    assert status == 400, body
    assert "line 2, field 'y'" in body["message"], body
    assert "out of range" in body["message"], body
    status, body = _http(pg, "/v1/ingest/reals", b'{"i": 5, "x": 0.1, "y": 16777217}\n')
    assert status == 200, body
    with pg.connect() as conn:
        assert conn.execute("SELECT x::text, y::text FROM reals WHERE i = 5").fetchall() == [
            ("0.1", "1.6777216e+07")
        ]
