"""Postgres' catalog (information_schema, pg_catalog, server functions) over every protocol
of a real ``kyma serve``: HTTP and Flight SQL answer it as the Postgres protocol does, with
the same token scopes; pgcli's completion queries and the schema queries Grafana's and
Metabase's Postgres drivers send answer what they expect."""

from __future__ import annotations

import json

import adbc_driver_flightsql.dbapi
import psycopg
import pytest
from pgcli.pgexecute import PGExecute
from pgspecial.main import PGSpecial
from pgwire_serve import PgServe
from serve_helpers import request

TABLES = "SELECT table_name FROM information_schema.tables ORDER BY table_name"


@pytest.fixture(scope="module")
def two_tables(pg: PgServe) -> PgServe:
    """``events`` and ``other``: the ``read_other`` token may read only ``other``."""
    with pg.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE other (id long, label string)")
    return pg


def _http(pg: PgServe, sql: str, token: str = "admin") -> tuple[int, dict]:
    status, _headers, body = request(
        f"{pg.serve.url}/v1/query",
        json.dumps({"sql": sql}).encode(),
        headers={"Authorization": f"Bearer {pg.tokens[token]}"},
    )
    return status, json.loads(body)


def _flight(pg: PgServe, sql: str, token: str = "admin") -> list[tuple]:
    assert pg.serve.flight_url is not None
    header = {"adbc.flight.sql.authorization_header": f"Bearer {pg.tokens[token]}"}
    with (
        adbc_driver_flightsql.dbapi.connect(
            pg.serve.flight_url, db_kwargs=header, autocommit=True
        ) as conn,
        conn.cursor() as cur,
    ):
        cur.execute(sql)
        return cur.fetchall()


def test_information_schema_answers_over_http_within_the_token_scope(two_tables: PgServe) -> None:
    status, answer = _http(two_tables, TABLES)
    assert status == 200, answer
    assert answer["rows"] == [["events"], ["other"]]
    status, answer = _http(two_tables, TABLES, "read_other")
    assert status == 200, answer
    assert answer["rows"] == [["other"]]  # a table-limited token sees only its tables
    columns = (
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_name = 'events' ORDER BY ordinal_position"
    )
    status, answer = _http(two_tables, columns)
    for column in (["n", "bigint"], ["msg", "text"], ["ts", "timestamp with time zone"]):
        assert column in answer["rows"], answer
    assert _http(two_tables, columns, "read_other")[1]["rows"] == []
    status, answer = _http(two_tables, "SELECT schema_name FROM information_schema.schemata")
    assert ["public"] in answer["rows"], answer


def test_pg_catalog_and_server_functions_answer_over_http(two_tables: PgServe) -> None:
    status, answer = _http(
        two_tables,
        "SELECT c.relname, n.nspname FROM pg_catalog.pg_class c"
        " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1",
        "read_other",
    )
    assert status == 200, answer
    assert answer["rows"] == [["other", "public"]]
    status, answer = _http(two_tables, "SELECT version(), current_schema()")
    assert status == 200, answer
    assert [c["name"] for c in answer["columns"]] == ["version", "current_schema"]
    assert answer["rows"][0][0].startswith("PostgreSQL 15.0 (kyma ")
    assert answer["rows"][0][1] == "public"
    status, answer = _http(two_tables, "SELECT typname FROM pg_type WHERE oid = 3802")
    assert answer["rows"] == [["jsonb"]]
    status, answer = _http(two_tables, "SELECT datname FROM pg_database")
    assert answer["rows"] == [["kyma"]]
    status, answer = _http(two_tables, "SELECT setting FROM pg_settings WHERE name = 'TimeZone'")
    assert answer["rows"] == [["UTC"]]
    # a query over a table is still the engine's, functions and all
    status, answer = _http(two_tables, "SELECT count(*) AS c FROM events")
    assert answer["rows"] == [[3]]


def test_catalog_answers_over_flight_sql_within_the_token_scope(two_tables: PgServe) -> None:
    assert _flight(two_tables, TABLES) == [("events",), ("other",)]
    assert _flight(two_tables, TABLES, "read_other") == [("other",)]
    (version,) = _flight(two_tables, "SELECT version()")[0]
    assert version.startswith("PostgreSQL 15.0")


def test_a_connector_catalog_is_left_to_federation(two_tables: PgServe) -> None:
    status, answer = _http(two_tables, "SELECT table_name FROM src.information_schema.tables")
    assert status == 404, answer
    assert answer["message"] == "no connector named 'src'", answer  # federation answered


def test_an_unknown_information_schema_view_is_a_precise_400(two_tables: PgServe) -> None:
    status, answer = _http(two_tables, "SELECT * FROM information_schema.routines")
    assert status == 400, answer
    assert "information_schema.routines is not available" in answer["message"]
    assert "information_schema.tables" in answer["message"]


def test_a_catalog_query_keeps_to_the_query_limits(two_tables: PgServe) -> None:
    """A cross join of catalog relations stops at KYMA_MAX_RESULT_ROWS (1,000,000), a deep
    expression at KYMA_MAX_EXPRESSION_DEPTH, over every protocol, and the server goes on."""
    huge = "SELECT a.oid FROM pg_type a, pg_type b, pg_type c, pg_type d, pg_type e"
    status, answer = _http(two_tables, huge)
    assert status == 413, answer
    assert "KYMA_MAX_RESULT_ROWS" in answer["message"], answer
    with two_tables.connect(autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="KYMA_MAX_RESULT_ROWS"):
            conn.execute(huge)
        assert conn.execute("SELECT typname FROM pg_type WHERE oid = 20").fetchone() == ("int8",)
    deep = "SELECT " + "(" * 5000 + "1" + ")" * 5000 + " AS x FROM pg_class"
    status, answer = _http(two_tables, deep)
    assert status == 400, answer
    assert "KYMA_MAX_EXPRESSION_DEPTH" in answer["message"], answer
    assert _http(two_tables, "SELECT count(*) AS c FROM pg_class")[1]["rows"] == [[2]]


def test_pgcli_completes_from_the_catalog_and_runs_a_query(two_tables: PgServe) -> None:
    executor = PGExecute(
        "kyma", "kyma", two_tables.tokens["admin"], "127.0.0.1", two_tables.port, ""
    )
    try:
        assert executor.search_path() == ["pg_catalog", "public"]
        assert "public" in executor.schemata()
        assert sorted(executor.tables()) == [("public", "events"), ("public", "other")]
        columns = [(t, c, kind) for _s, t, c, kind, *_ in executor.table_columns()]
        assert ("other", "label", "text") in columns
        assert ("events", "n", "bigint") in columns
        assert list(executor.views()) == []
        assert executor.databases() == ["kyma"]
        assert list(executor.foreignkeys()) == []
        assert list(executor.functions()) == []
        assert list(executor.datatypes()) == []
        ((title, rows, headers, status, *_),) = list(
            executor.run("SELECT n FROM events ORDER BY n")
        )
        assert (headers, list(rows), status) == (["n"], [(1,), (2,), (3,)], "SELECT 3")
        ((title, rows, headers, status, *_),) = list(executor.run("\\dt", pgspecial=PGSpecial()))
        assert [r[1] for r in rows] == ["events", "other"], (title, rows, headers, status)
        ((title, rows, headers, status, *_),) = list(
            executor.run("\\d other", pgspecial=PGSpecial())
        )
        assert [list(r[:2]) for r in rows][-2:] == [["id", "bigint"], ["label", "text"]], rows
    finally:
        executor.conn.close()


# Grafana's Postgres data source (postgresMetaQuery.ts) browsing schemas, tables, columns.
GRAFANA_SEARCH_PATH = """
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )"""
GRAFANA = {
    "version": "SELECT current_setting('server_version_num')::int/100 as version",
    "timescale": "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'",
    "schemas": """SELECT schema_name AS "name"
    FROM information_schema.schemata
    WHERE schema_name NOT IN ('information_schema', 'pg_catalog', 'pg_toast',
                              '_timescaledb_cache', '_timescaledb_catalog')
    ORDER BY schema_name""",
    "tables in a schema": """SELECT quote_ident(table_name) AS "table"
      FROM information_schema.tables
      WHERE quote_ident(table_schema) = 'public'
      ORDER BY 1""",
    "tables": f"""SELECT
    CASE WHEN {GRAFANA_SEARCH_PATH}
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema', 'pg_catalog')
    ORDER BY CASE WHEN {GRAFANA_SEARCH_PATH} THEN 0 ELSE 1 END, 1""",
    "columns": f"""SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('other'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('other'))[1]
          AND quote_ident(table_name) = (parse_ident('other'))[2]
        ELSE quote_ident(table_name) = 'other'
          AND {GRAFANA_SEARCH_PATH}
      END""",
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("version", [(1500,)]),
        ("timescale", []),
        ("schemas", [("public",)]),
        ("tables in a schema", [("events",), ("other",)]),
        ("tables", [("events",), ("other",)]),
        (
            "columns",
            [
                ("_timestamp", "timestamp with time zone"),
                ("props", "jsonb"),
                ("id", "bigint"),
                ("label", "text"),
            ],
        ),
    ],
)
def test_grafana_browses_the_schema(two_tables: PgServe, query: str, expected: list) -> None:
    with two_tables.connect(autocommit=True) as conn:
        assert conn.execute(GRAFANA[query]).fetchall() == expected


# Metabase's Postgres driver (driver/postgres.clj): describe-database's table list, its
# enum-type lookup, describe-fields' column list.
METABASE_TABLES = """SELECT n.nspname AS schema, c.relname AS name,
  CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE' WHEN 'v' THEN 'VIEW'
    WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE NULL END AS type,
  d.description AS description, stat.n_live_tup AS estimated_row_count
FROM pg_catalog.pg_class AS c
INNER JOIN pg_catalog.pg_namespace AS n ON c.relnamespace = n.oid
LEFT JOIN pg_catalog.pg_description AS d
  ON (c.oid = d.objoid) AND (d.objsubid = 0) AND (d.classoid = 'pg_class'::regclass)
LEFT JOIN pg_stat_user_tables AS stat
  ON (n.nspname = stat.schemaname) AND (c.relname = stat.relname)
WHERE (c.relnamespace = n.oid) AND (n.nspname !~ '^pg_') AND (n.nspname <> 'information_schema')
  AND c.relkind in ('r', 'p', 'v', 'f', 'm') AND (n.nspname IN ('public'))
ORDER BY type ASC, schema ASC, name ASC"""
METABASE_ENUMS = (
    "SELECT nspname, typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
    " WHERE t.oid IN (SELECT DISTINCT enumtypid FROM pg_enum e)"
)

# describe-fields: the columns of the synced tables, with primary keys and comments
METABASE_FIELDS = """SELECT "c"."column_name" AS "name",
  CASE WHEN "c"."udt_schema" IN ('public', 'pg_catalog') THEN FORMAT('%s', "c"."udt_name")
    ELSE FORMAT('"%s"."%s"', "c"."udt_schema", "c"."udt_name") END AS "database-type",
  "c"."ordinal_position" - 1 AS "database-position",
  "c"."table_schema" AS "table-schema", "c"."table_name" AS "table-name",
  "pk"."column_name" IS NOT NULL AS "pk?",
  COL_DESCRIPTION(CAST(CAST(FORMAT('%I.%I', CAST("c"."table_schema" AS TEXT),
    CAST("c"."table_name" AS TEXT)) AS REGCLASS) AS OID), "c"."ordinal_position")
    AS "field-comment",
  (("column_default" IS NULL) OR (LOWER("column_default") = 'null')) AND ("is_nullable" = 'NO')
    AND NOT ((("column_default" IS NOT NULL) AND ("column_default" LIKE '%nextval(%'))
    OR ("is_identity" <> 'NO')) AS "database-required",
  (("column_default" IS NOT NULL) AND ("column_default" LIKE '%nextval(%'))
    OR ("is_identity" <> 'NO') AS "database-is-auto-increment"
FROM "information_schema"."columns" AS "c"
LEFT JOIN (SELECT "tc"."table_schema", "tc"."table_name", "kc"."column_name"
  FROM "information_schema"."table_constraints" AS "tc"
  INNER JOIN "information_schema"."key_column_usage" AS "kc"
    ON ("tc"."constraint_name" = "kc"."constraint_name")
    AND ("tc"."table_schema" = "kc"."table_schema") AND ("tc"."table_name" = "kc"."table_name")
  WHERE "tc"."constraint_type" = 'PRIMARY KEY') AS "pk"
  ON ("c"."table_schema" = "pk"."table_schema") AND ("c"."table_name" = "pk"."table_name")
  AND ("c"."column_name" = "pk"."column_name")
WHERE c.table_schema !~ '^information_schema|catalog_history|pg_'
  AND ("c"."table_schema" IN ('public')) AND ("c"."table_name" IN ('other'))
UNION ALL
SELECT "pa"."attname" AS "name",
  CASE WHEN "ptn"."nspname" IN ('public', 'pg_catalog') THEN FORMAT('%s', "pt"."typname")
    ELSE FORMAT('"%s"."%s"', "ptn"."nspname", "pt"."typname") END AS "database-type",
  "pa"."attnum" - 1 AS "database-position", "pn"."nspname" AS "table-schema",
  "pc"."relname" AS "table-name", FALSE AS "pk?", NULL AS "field-comment",
  FALSE AS "database-required", FALSE AS "database-is-auto-increment"
FROM "pg_catalog"."pg_class" AS "pc"
INNER JOIN "pg_catalog"."pg_namespace" AS "pn" ON "pn"."oid" = "pc"."relnamespace"
INNER JOIN "pg_catalog"."pg_attribute" AS "pa" ON "pa"."attrelid" = "pc"."oid"
INNER JOIN "pg_catalog"."pg_type" AS "pt" ON "pt"."oid" = "pa"."atttypid"
INNER JOIN "pg_catalog"."pg_namespace" AS "ptn" ON "ptn"."oid" = "pt"."typnamespace"
WHERE ("pc"."relkind" = 'm') AND ("pa"."attnum" >= 1) AND ("pn"."nspname" IN ('public'))
  AND ("pc"."relname" IN ('other'))
ORDER BY "table-schema" ASC, "table-name" ASC, "database-position" ASC"""


# Metabase 0.55's sync, as it sends them: the JDBC driver's getSchemas, then the driver's
# current-user-table-privileges query.
METABASE_SCHEMAS = """SELECT nspname AS "TABLE_SCHEM", current_database() AS "TABLE_CATALOG" \
FROM pg_catalog.pg_namespace  WHERE nspname <> 'pg_toast' AND (nspname !~ '^pg_temp_'  OR \
nspname = (pg_catalog.current_schemas(true))[1]) AND (nspname !~ '^pg_toast_temp_'  OR nspname \
= replace((pg_catalog.current_schemas(true))[1], 'pg_temp_', 'pg_toast_temp_'))  ORDER BY \
"TABLE_SCHEM" """.rstrip()
_PRIVILEGE = """pg_catalog.{fn}(current_user, '"' || replace(t.schemaname, '"', '""') || '"' \
|| '.' || '"' || replace(t.objectname, '"', '""') || '"',  '{privilege}') as {privilege}"""
METABASE_PRIVILEGES = f"""with table_privileges as (
         select
           NULL as role,
           t.schemaname as schema,
           t.objectname as table,
           {_PRIVILEGE.format(fn="has_any_column_privilege", privilege="update")},
           {_PRIVILEGE.format(fn="has_any_column_privilege", privilege="select")},
           {_PRIVILEGE.format(fn="has_any_column_privilege", privilege="insert")},
           {_PRIVILEGE.format(fn="has_table_privilege     ", privilege="delete")}
         from (
           select schemaname, tablename as objectname from pg_catalog.pg_tables
           union
           select schemaname, viewname as objectname from pg_catalog.pg_views
           union
           select schemaname, matviewname as objectname from pg_catalog.pg_matviews
         ) t
         where t.schemaname !~ '^pg_'
           and t.schemaname <> 'information_schema'
           and pg_catalog.has_schema_privilege(current_user, t.schemaname, 'usage')
        )
        select t.*
        from table_privileges t"""


def test_metabase_syncs_schemas_and_table_privileges(two_tables: PgServe) -> None:
    """The schemas as Postgres lists them; each table the token may read, with the privilege
    to select it (the write privileges read FALSE: a token's writes are checked when they
    run; docs/clients/postgres-protocol.md)."""
    with two_tables.connect(autocommit=True) as conn:
        assert conn.execute(METABASE_SCHEMAS).fetchall() == [
            ("information_schema", "kyma"),
            ("pg_catalog", "kyma"),
            ("public", "kyma"),
        ]
        rows = conn.execute(METABASE_PRIVILEGES).fetchall()
        assert sorted(rows) == [
            (None, "public", "events", False, True, False, False),
            (None, "public", "other", False, True, False, False),
        ]
    with two_tables.connect("read_other", autocommit=True) as conn:
        assert [r[2] for r in conn.execute(METABASE_PRIVILEGES)] == ["other"]


def test_metabase_describes_the_database(two_tables: PgServe) -> None:
    with two_tables.connect(autocommit=True) as conn:
        assert conn.execute(METABASE_TABLES).fetchall() == [
            ("public", "events", "TABLE", None, None),
            ("public", "other", "TABLE", None, None),
        ]
        assert conn.execute(METABASE_ENUMS).fetchall() == []
        fields = conn.execute(METABASE_FIELDS).fetchall()
        described = [(name, kind, position, table) for name, kind, position, _, table, *_ in fields]
        assert described[-2:] == [("id", "int8", 2, "other"), ("label", "text", 3, "other")]
        assert {(pk, comment, auto) for *_, pk, comment, _required, auto in fields} == {
            (False, None, False)
        }
    with psycopg.connect(two_tables.dsn(two_tables.tokens["read_other"])) as conn:
        assert [r[1] for r in conn.execute(METABASE_TABLES)] == ["other"]
