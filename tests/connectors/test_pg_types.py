"""Postgres types through ADBC into kyma's Arrow types, on a real server."""

from __future__ import annotations

import doctest
import uuid
from collections.abc import Iterator
from typing import Any

import adbc_driver_postgresql.dbapi as adbc
import cbor2
import psycopg
import pyarrow as pa
import pytest
from sqlglot import exp

from kyma.connectors.postgres import _types
from kyma.connectors.postgres._types import PgType, fetch_expression, kyma_type, to_kyma
from kyma.engine.errors import FormatError
from kyma.engine.types import KYMA_TYPE_KEY, KymaType, parse_timestamp

NEW_YORK = "-c TimeZone=America/New_York"


def ns(text: str) -> int:
    value = parse_timestamp(text)
    assert value is not None
    return value


# name, declared type, literal of the one non-null row, kyma type, expected value
COLUMNS: list[tuple[str, str, str, str, Any]] = [
    ("c_int2", "smallint", "-32768", "int", -32768),
    ("c_int4", "integer", "2147483647", "int", 2147483647),
    ("c_int8", "bigint", "9223372036854775807", "long", 9223372036854775807),
    ("c_oid", "oid", "4294967295", "long", 4294967295),
    ("c_float4", "real", "1.5", "float4", 1.5),
    ("c_float8", "double precision", "0.1", "real", 0.1),
    ("c_num", "numeric(10,2)", "47.50", "real", 47.5),
    ("c_num15", "numeric(15,0)", "999999999999999", "real", 999999999999999.0),
    ("c_bignum", "numeric(30,3)", "12345678901234567890.123", "string", "12345678901234567890.123"),
    ("c_anynum", "numeric", "0.10", "string", "0.10"),
    ("c_bool", "boolean", "true", "bool", True),
    ("c_text", "text", "'héllo'", "string", "héllo"),
    ("c_varchar", "varchar(5)", "'abc'", "string", "abc"),
    ("c_char", "char(3)", "'c'", "string", "c"),  # blanks are insignificant
    ("c_name", "name", "'nm'", "string", "nm"),
    ("c_uuid", "uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "string",
     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("c_bytea", "bytea", r"'\xdeadbeef00'", "string", "3q2+7wA="),
    ("c_ts", "timestamp", "'2024-01-02 03:04:05.123456'", "timestamp",
     ns("2024-01-02T03:04:05.123456Z")),
    ("c_tstz", "timestamptz", "'2024-01-15 12:00:00'", "timestamp", ns("2024-01-15T17:00:00Z")),
    ("c_date", "date", "'2024-02-29'", "timestamp", ns("2024-02-29T00:00:00Z")),
    ("c_time", "time", "'24:00'", "timestamp", ns("1970-01-02T00:00:00Z")),
    ("c_json", "json", """'{"a": [1, 2.5, "x", null, true]}'""", "dynamic",
     {"a": [1, 2.5, "x", None, True]}),
    ("c_jsonb", "jsonb", """'{"b": 12345678901234567890123}'""", "dynamic",
     {"b": 12345678901234567890123}),
    ("c_int_arr", "integer[]", "'{{1,2},{3,NULL}}'", "dynamic", [[1, 2], [3, None]]),
    ("c_text_arr", "text[]", """'{"a b",NULL}'""", "dynamic", ["a b", None]),
    ("c_range", "int4range", "'[1,5)'", "dynamic",
     {"lower": 1, "upper": 5, "lower_inc": True, "upper_inc": False}),
    ("c_enum", "mood", "'ok'", "string", "ok"),
    ("c_inet", "inet", "'10.0.0.1'", "string", "10.0.0.1"),
    ("c_inet_net", "inet", "'10.0.0.1/8'", "string", "10.0.0.1/8"),
    ("c_cidr", "cidr", "'10.0.0.0/8'", "string", "10.0.0.0/8"),
    ("c_mac", "macaddr", "'08:00:2b:01:02:03'", "string", "08:00:2b:01:02:03"),
    ("c_hstore", "hstore", "'a=>1, b=>NULL'", "dynamic", {"a": "1", "b": None}),
    ("c_tsvector", "tsvector", "'b a'", "dynamic", "'a' 'b'"),
]  # fmt: skip
OPTIONAL = {
    "vector": ("c_vector", "vector(3)", "'[1,2.5,-3]'", "vector(3)", [1.0, 2.5, -3.0]),
    "postgis": ("c_geom", "geometry", "'POINT(1 2)'", "string", "POINT(1 2)"),
}
INTROSPECT = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typname, t.typcategory,
       information_schema._pg_numeric_precision(a.atttypid, a.atttypmod)
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = 'everything'::regclass AND a.attnum > 0 ORDER BY a.attnum
"""


@pytest.fixture(scope="module")
def source(pg_server_url: str) -> Iterator[tuple[str, list[tuple[str, str, str, str, Any]]]]:
    """A database with one table holding a column of every mapped type: a row of values and a
    row of NULLs, written in a session whose TimeZone is America/New_York."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = f"{pg_server_url.rpartition('/')[0]}/{name}"
    with psycopg.connect(url, autocommit=True, options=NEW_YORK) as conn:
        available = {row[0] for row in conn.execute("SELECT name FROM pg_available_extensions")}
        columns = COLUMNS + [spec for ext, spec in OPTIONAL.items() if ext in available]
        for ext in ("hstore", *(ext for ext in OPTIONAL if ext in available)):
            conn.execute(f"CREATE EXTENSION {ext}")
        conn.execute("CREATE TYPE mood AS ENUM ('sad', 'ok')")
        conn.execute(f"CREATE TABLE everything ({', '.join(f'{c} {t}' for c, t, *_ in columns)})")
        conn.execute(f"INSERT INTO everything VALUES ({', '.join(c[2] for c in columns)})")
        conn.execute("INSERT INTO everything DEFAULT VALUES")
    yield url, columns
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def fetch(url: str, sql: str) -> pa.Table:
    with adbc.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SET TimeZone = 'America/New_York'")
        cur.execute(sql)
        return cur.fetch_arrow_table()


def plain(table: pa.Table, name: str) -> list[Any]:
    """A column's values with timestamps as epoch ns and dynamic values decoded."""
    column = table.column(name)
    if pa.types.is_timestamp(column.type):
        return column.cast(pa.int64()).to_pylist()
    if table.schema.field(name).metadata == {KYMA_TYPE_KEY: b"dynamic"}:
        return [None if v is None else cbor2.loads(v) for v in column.to_pylist()]
    return column.to_pylist()


def test_every_type_reads_as_its_kyma_type(source) -> None:
    url, columns = source
    with psycopg.connect(url) as conn:
        found = {row[0]: PgType(*row[1:]) for row in conn.execute(INTROSPECT)}
    modes = {"numeric_mode": "real", "geometry_mode": "wkt"}
    items = [
        fetch_expression(exp.column(c, quoted=True), found[c], c, **modes) for c, *_ in columns
    ]
    table = to_kyma(
        fetch(url, exp.select(*items).from_("everything").sql(dialect="postgres")),
        vectors={"c_vector": 3},
    )
    assert table.num_rows == 2
    for name, declared, _, kind, value in columns:
        expected = KymaType.parse(kind)
        assert kyma_type(found[name], **modes)[0] == expected, declared
        assert table.schema.field(name).type == expected.to_arrow(), declared
        assert plain(table, name) == [value, None], declared


def test_computed_expressions_convert_from_their_arrow_types(source) -> None:
    url, _ = source
    sql = """SELECT avg(c_num) AS a, count(*) AS n, lower(max(c_text)) AS l, sum(c_int2) AS s,
                    c_int2 / 2::int2 AS i, array_agg(c_ts) AS ts, array_agg(c_uuid) AS u,
                    max(c_float4) AS f, 1 AS dup, 2 AS dup
             FROM everything GROUP BY c_int2 ORDER BY c_int2 NULLS LAST"""
    table = to_kyma(fetch(url, sql))
    assert [f.type for f in table.schema] == [
        pa.float64(), pa.int64(), pa.string(), pa.int64(), pa.int32(), pa.binary(),
        pa.binary(), pa.float32(), pa.int32(), pa.int32(),  # max(real) is a real
    ]  # fmt: skip
    assert table.column_names[-2:] == ["dup", "dup"]
    assert plain(table, "a") == [47.5, None]
    assert plain(table, "n") == [1, 1]
    assert plain(table, "l") == ["héllo", None]
    assert plain(table, "s") == [-32768, None]
    assert plain(table, "i") == [-16384, None]
    assert plain(table, "ts") == [["2024-01-02T03:04:05.123456000Z"], [None]]
    assert plain(table, "u") == [["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"], [None]]


def test_decimal_text_converts_correctly_rounded(fetch_literal) -> None:
    assert to_kyma(fetch_literal("47.5000000000000000::numeric")).column(0).to_pylist() == [47.5]
    assert to_kyma(fetch_literal("0.1::numeric(3,2)")).column(0).to_pylist() == [0.1]


@pytest.fixture
def fetch_literal(source):
    url, _ = source
    return lambda literal: fetch(url, f"SELECT {literal} AS x")


@pytest.mark.parametrize(
    ("literal", "detail"),
    [
        ("'10.0.0.1'::inet", "'inet' arrives as"),
        ("'3000-01-01'::timestamptz", "outside kyma's timestamps"),  # ±infinity do convert
        ("'1000-01-01'::date", "outside kyma's timestamps"),
        ("'1 day'::interval", "'interval' arrives as"),
    ],
)
def test_what_cannot_convert_raises_naming_the_column(fetch_literal, literal, detail) -> None:
    with pytest.raises(FormatError, match=f"'x'.*{detail}"):
        to_kyma(fetch_literal(literal))


def test_pgvector_wire_shape_becomes_a_fixed_size_list(fetch_literal) -> None:
    raw = fetch_literal("'{1,2.5,-3}'::real[]")
    table = to_kyma(raw, vectors={"x": 3})
    assert table.schema.field("x").type == pa.list_(pa.float32(), 3)
    assert table.column("x").to_pylist() == [[1.0, 2.5, -3.0]]
    with pytest.raises(FormatError, match=r"expected vector\(2\), got 3 dimensions"):
        to_kyma(raw, vectors={"x": 2})


@pytest.mark.parametrize(
    ("pg_type", "modes", "kind", "warned"),
    [
        (PgType("numeric(15,2)", "numeric", "N", 15), {}, "real", False),
        (PgType("numeric(16,2)", "numeric", "N", 16), {}, "string", False),
        (PgType("numeric(10,2)", "numeric", "N", 10), {"numeric_mode": "string"}, "string", False),
        (PgType("numeric", "numeric", "N", None), {}, "string", False),
        (PgType("vector(3)", "vector", "U"), {}, "vector(3)", False),
        (PgType("vector", "vector", "U"), {}, "dynamic", True),
        (PgType("geometry", "geometry", "U"), {"geometry_mode": "wkt"}, "string", False),
        (PgType("geometry(Point,4326)", "geometry", "U"), {}, "dynamic", True),
        (PgType("hstore", "hstore", "U"), {}, "dynamic", False),
        (PgType("tstzrange", "tstzrange", "R"), {}, "dynamic", False),
        (PgType("mood", "mood", "E"), {}, "string", False),
        (PgType("bigint[]", "_int8", "A"), {}, "dynamic", False),
        (PgType("interval", "interval", "T"), {}, "dynamic", True),
    ],
)
def test_kyma_type_follows_the_seed_table(pg_type, modes, kind, warned) -> None:
    found, warning = kyma_type(pg_type, **modes)
    assert found == KymaType.parse(kind)
    assert (warning is not None) == warned
    if warned:
        assert repr(pg_type.name) in warning


@pytest.mark.parametrize(
    ("pg_type", "modes", "sql"),
    [
        (PgType("integer", "int4", "N"), {}, '"C" AS "a"'),
        (PgType("numeric(30,2)", "numeric", "N", 30), {}, 'CAST("C" AS TEXT) AS "a"'),
        (PgType("inet", "inet", "I"), {}, 'ABBREV("C") AS "a"'),
        (PgType("vector(3)", "vector", "U"), {}, 'CAST("C" AS REAL[]) AS "a"'),
        (PgType("geometry", "geometry", "U"), {"geometry_mode": "wkt"}, 'ST_ASTEXT("C") AS "a"'),
        (PgType("geometry", "geometry", "U"), {}, 'TO_JSONB("C") AS "a"'),
        (PgType("hstore", "hstore", "U"), {}, 'HSTORE_TO_JSONB("C") AS "a"'),
        (PgType("integer[]", "_int4", "A"), {}, 'TO_JSONB("C") AS "a"'),
        (
            PgType("int4range", "int4range", "R"),
            {},
            "CASE WHEN NOT \"C\" IS NULL THEN JSONB_BUILD_OBJECT('lower', LOWER(\"C\"), 'upper',"
            ' UPPER("C"), \'lower_inc\', LOWER_INC("C"), \'upper_inc\', UPPER_INC("C")) END'
            ' AS "a"',
        ),
    ],
)
def test_fetch_expression_sql(pg_type, modes, sql) -> None:
    column = exp.column("C", quoted=True)
    assert fetch_expression(column, pg_type, "a", **modes).sql(dialect="postgres") == sql


def test_docstring_examples() -> None:
    result = doctest.testmod(_types)
    assert result.attempted > 0
    assert result.failed == 0
