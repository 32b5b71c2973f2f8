"""jsonb operators and functions on dynamic values, against Postgres as the oracle: the same
documents in a kyma table (dynamic columns, ingested through the HTTP write path) and in a
Postgres table (jsonb columns), the same statements, the same answers (jsonb as values, text
exactly as Postgres renders it)."""

from __future__ import annotations

import json

import cbor2
import psycopg
import pytest
from http_helpers import post_lines

from kyma.dynamic import is_dynamic
from kyma.engine.error_statuses import status
from kyma.engine.errors import KymaError

DOCS = [
    {"a": 1, "s": "x", "arr": [10, "t", None, {"k": 2}], "o": {"k": "v", "n": [1, 2]}},
    {"a": 2.5, "s": 'q"uo\\te\n', "arr": [], "o": {}, "bb": True, "ccc": None},
    {"a": "1", "s": "é ünï", "arr": [[1, 2], [3]], "o": {"k": {"deep": [True, False]}}},
    {"s": "x", "arr": ["a", "b"], "zz": {"a": 1, "b": [1, 2], "aa": "y", "c": None}},
    {"a": None, "o": {"k": 3, "0": "zero", "1": "one"}},
    {},
]
EVENTS = [["e0", "e1", {"n": 1}], [], [1], ["x", ["y", "z"]], None, [True]]

# Each statement runs on both engines (``doc`` and ``events`` are jsonb in Postgres).
CASES = [
    "SELECT id, doc -> 'a' FROM t ORDER BY id",
    "SELECT id, doc ->> 'a' FROM t ORDER BY id",
    "SELECT id, doc ->> 's' FROM t ORDER BY id",
    "SELECT id, doc -> 's' FROM t ORDER BY id",
    "SELECT id, doc -> 'arr' -> 0, doc -> 'arr' ->> 1, doc -> 'arr' -> -1 FROM t ORDER BY id",
    "SELECT id, doc -> 'arr' ->> 3, doc -> 'arr' -> 3 -> 'k', doc -> 'arr' -> 9 FROM t ORDER BY id",
    "SELECT id, doc -> 'o' ->> 'k', doc -> 'o' -> 'k', doc ->> 'o' FROM t ORDER BY id",
    "SELECT id, doc #> '{o,k}', doc #>> '{arr,1}', doc #>> '{o,0}', doc #> '{arr,-1}' FROM t",
    "SELECT id, doc #>> '{}', doc #> '{o,k,deep,0}', doc #>> '{\"o\",\"n\"}' FROM t ORDER BY id",
    "SELECT id, doc::text FROM t ORDER BY id",
    "SELECT id, (doc -> 'zz')::text, (doc -> 'o')::text, (doc #> '{arr}')::text FROM t ORDER BY id",
    "SELECT id, doc -> 0, doc -> 'arr' -> 'x' FROM t ORDER BY id",
    'SELECT id FROM t WHERE doc @> \'{"s": "x"}\' ORDER BY id',
    'SELECT id FROM t WHERE doc @> \'{"arr": ["a"]}\' OR doc @> \'{"o": {}}\' ORDER BY id',
    "SELECT id, doc -> 'arr' @> '10', doc -> 'o' @> '{\"n\": [2]}' FROM t ORDER BY id",
    "SELECT id, '{\"a\": 1}' <@ doc, doc @> '{\"a\": 1.0}' FROM t ORDER BY id",
    "SELECT id, doc ? 'a', doc ? 'zz', doc -> 'arr' ? 'a' FROM t ORDER BY id",
    "SELECT id, doc ?| array['bb', 'zz'], doc ?& array['a', 's'] FROM t ORDER BY id",
    "SELECT id, jsonb_typeof(doc -> 'a'), jsonb_typeof(doc -> 'arr'), jsonb_typeof(doc) FROM t",
    "SELECT id, jsonb_typeof(doc -> 'o'), jsonb_typeof(doc -> 'bb'), jsonb_typeof(doc -> 'ccc')"
    " FROM t",
    "SELECT id, jsonb_array_length(doc -> 'arr') FROM t WHERE doc ? 'arr' ORDER BY id",
    "SELECT id, jsonb_object_keys(doc) AS k FROM t ORDER BY id, k",
    "SELECT id, jsonb_object_keys(doc -> 'zz') FROM t WHERE doc ? 'zz' ORDER BY id",
    "SELECT id, jsonb_array_elements(doc -> 'arr') AS e FROM t WHERE doc ? 'arr'",
    "SELECT id, jsonb_array_elements_text(doc -> 'arr') AS e FROM t WHERE doc ? 'arr'",
    "SELECT t.id, e.key, e.value FROM t CROSS JOIN LATERAL jsonb_each(t.doc) AS e",
    "SELECT id, key, value FROM t, jsonb_each_text(t.doc -> 'o') WHERE key <> 'n'",
    "SELECT id, k FROM t, jsonb_object_keys(doc) AS k WHERE k LIKE '%a%' ORDER BY id, k",
    "SELECT t.id, e FROM t, jsonb_array_elements(t.doc -> 'arr') AS e",
    "SELECT t.id, x FROM t JOIN LATERAL jsonb_array_elements_text(t.events) AS e(x) ON true",
    'SELECT * FROM jsonb_each(\'{"b": [1], "a": null}\')',
    'SELECT value FROM jsonb_array_elements_text(\'["x", 1, null, {"a": 2}]\')',
    'SELECT * FROM jsonb_object_keys(\'{"bb": 1, "a": 2}\')',
    "SELECT id, events[0], events[1], events[-1], events[1][0] FROM t ORDER BY id",
    "SELECT id, events::text, events -> 2 ->> 'n' FROM t ORDER BY id",
    'SELECT \'{"b": 1, "a": [1, 2]}\'::jsonb::text, \'[1, "x", null]\'::jsonb -> 1',
    "SELECT ('{\"b\": {\"c\": [5, 6]}}'::jsonb) #>> '{b,c,1}', jsonb_typeof('true')",
    "SELECT doc ->> 's' AS s, count(*) AS n FROM t GROUP BY doc ->> 's' ORDER BY s",
    "SELECT id FROM t WHERE (doc ->> 'a')::numeric > 1 ORDER BY id",
    "SELECT id, doc -> 'a' = '1.0', doc -> 'o' = '{\"n\": [1, 2], \"k\": \"v\"}' FROM t",
    "SELECT id, doc -> 'a' <> '\"1\"', doc -> 'bb' = 'true', doc -> 'a' = doc -> 'a' FROM t",
]

ERRORS = [
    ("SELECT jsonb_array_length(doc) FROM t", "22023", "cannot get array length of a non-array"),
    ("SELECT jsonb_object_keys(doc -> 'arr') FROM t", "22023", "on an array"),
    ("SELECT jsonb_array_elements(doc) FROM t", "22023", "cannot extract elements from an object"),
    ("SELECT 'nope'::jsonb", "22P02", "invalid input syntax for type json"),
]


@pytest.fixture
def engines(client, services, catalog_url):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE t (id bigint, doc dynamic, events dynamic)")
    rows = [
        {"id": i, "doc": d, "events": e} for i, (d, e) in enumerate(zip(DOCS, EVENTS, strict=True))
    ]
    post_lines(client, "t", rows)
    with psycopg.connect(catalog_url, autocommit=True) as pg:
        pg.execute("CREATE SCHEMA oracle")
        pg.execute("CREATE TABLE oracle.t (id bigint, doc jsonb, events jsonb)")
        for row, d, e in zip(rows, DOCS, EVENTS, strict=True):
            pg.execute(
                "INSERT INTO oracle.t VALUES (%s, %s::jsonb, %s::jsonb)",
                (row["id"], *(None if v is None else json.dumps(v) for v in (d, e))),
            )
        pg.execute("SET search_path = oracle")
        yield services.query, pg


def _kyma_rows(engine, sql: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    table = engine.execute(sql).table
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        values = column.to_pylist()
        if is_dynamic(field):
            values = [None if v is None else cbor2.loads(v) for v in values]
        columns.append(values)
    return list(zip(*columns, strict=True))


def _pg_rows(pg: psycopg.Connection, sql: str) -> list[tuple]:
    rows = pg.execute(sql).fetchall()
    return [tuple(float(v) if type(v).__name__ == "Decimal" else v for v in row) for row in rows]


def _multiset(rows: list[tuple]) -> list[str]:
    return sorted(json.dumps(row, sort_keys=True, default=repr) for row in rows)


def test_answers_equal_postgres(engines) -> None:
    engine, pg = engines
    wrong = []
    for sql in CASES:
        expected = _pg_rows(pg, sql)
        try:
            got = _kyma_rows(engine, sql)
        except KymaError as e:
            got = [("error", str(e))]
        if _multiset(got) != _multiset(expected):
            wrong.append(f"{sql}\n  kyma:     {got}\n  postgres: {expected}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("sql", "sqlstate", "message"), ERRORS)
def test_errors_match_postgres(engines, sql: str, sqlstate: str, message: str) -> None:
    engine, pg = engines
    with pytest.raises(psycopg.Error) as oracle:
        pg.execute(sql)
    assert oracle.value.sqlstate == sqlstate
    assert message in str(oracle.value)
    with pytest.raises(KymaError) as raised:
        engine.execute(sql)
    assert status(raised.value, "sqlstate") == sqlstate
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "where",
    ["doc ->> 'user' = 'u1'", "doc #>> '{user}' = 'u1'", "doc -> 'http' ->> 'method' = 'PUT'"],
)
def test_text_paths_read_shredded_columns_and_prune(client, services, where: str) -> None:
    services.query.execute("CREATE TABLE p (id bigint, doc dynamic)")
    for batch in range(3):
        method = "PUT" if batch == 1 else "GET"
        rows = [
            {"id": batch * 100 + i, "doc": {"user": f"u{batch}", "http": {"method": method}}}
            for i in range(50)
        ]
        post_lines(client, "p", rows)
    answer = services.query.execute(f"SELECT count(*) AS n, min(id) AS low FROM p WHERE {where}")
    assert answer.table.to_pylist() == [{"n": 50, "low": 100}]
    assert (answer.stats["extents_total"], answer.stats["extents_after_catalog"]) == (3, 1)
    assert answer.stats["rows_scanned"] == 50


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM t, jsonb_each(t.doc)",  # name the columns
        "SELECT jsonb_each(doc) FROM t",  # a record per row: use it in FROM
        "SELECT id FROM t LEFT JOIN jsonb_each(t.doc) AS e ON true",
        "SELECT doc -> id FROM t",  # a path step that is no constant
        "SELECT '{}'::json",  # json keeps its text as written; kyma has jsonb
        "SELECT id FROM t WHERE doc -> 'a' > '1'",  # jsonb's order of values
    ],
)
def test_refused_shapes_are_0a000(engines, sql: str) -> None:
    engine, _ = engines
    with pytest.raises(KymaError) as raised:
        engine.execute(sql)
    assert status(raised.value, "sqlstate") == "0A000", raised.value


def test_result_columns_are_named_as_postgres_names_them(engines) -> None:
    engine, pg = engines
    # one ``?column?`` a statement: repeated names are another matter (kyma keeps them apart)
    for unnamed in ("doc -> 'a'", "doc @> '{}'", "doc ? 'a'", "doc -> 'arr' ->> 0"):
        sql = (
            f"SELECT {unnamed}, doc::text, (doc -> 'o')::text, '1'::jsonb, jsonb_typeof(doc),"
            " jsonb_array_length(doc -> 'arr'), jsonb_object_keys(doc) FROM t WHERE id = 0"
        )
        expected = [c.name for c in pg.execute(sql).description]
        assert engine.execute(sql).table.column_names == expected
