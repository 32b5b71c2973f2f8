"""Federation end to end: a real TLS Postgres source, read through kyma's SQL and HTTP API."""

from __future__ import annotations

import json

import psycopg
import pytest
from http_helpers import sql
from query_strategies import rows_equal
from source_postgres import run_in_postgres
from sql_fixtures import cases

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query._parse import parse
from kyma.engine.query.pg_numeric import decimals

SECRET_ENV = "KYMA_SECRET_TEST_SOURCE"


@pytest.fixture
def src(services, source_db, monkeypatch):  # type: ignore[no-untyped-def]
    """A connector ``src`` on the seeded source database, TLS required (the default)."""
    monkeypatch.setenv(SECRET_ENV, source_db.password)
    services.connectors.create(
        {
            "name": "src",
            "type": "postgres",
            "mode": "federation",
            "connection": {"url": source_db.url, "secret_ref": f"$env:{SECRET_ENV}"},
            "scope": {"include_schemas": ["public"], "exclude_tables": ["public.audit_log"]},
        }
    )
    return services


def kyma_rows(services, text: str, **options) -> list[tuple]:  # type: ignore[no-untyped-def]
    table = decimals(services.query.execute(text, **options).table)  # quotients as decimals
    return [tuple(row.values()) for row in table.to_pylist()]


def direct(source_db, text: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    return run_in_postgres(source_db.url, text, password=source_db.password)


def test_both_spellings_read_the_source_now(src, source_db) -> None:
    query = "SELECT id, name, price, created_at FROM {} WHERE grp = 3 ORDER BY id"
    expected = direct(source_db, query.format("public.items"))
    assert expected
    for spelling in ("src.public.items", "live(src.public.items)"):
        assert rows_equal(expected, kyma_rows(src, query.format(spelling)), ordered=True)
    # The source changes; the next read sees it.
    (original,) = direct(source_db, "SELECT name FROM public.items WHERE id = 3")
    update = "UPDATE public.items SET name = %s WHERE id = 3"
    with psycopg.connect(source_db.admin_url, autocommit=True) as admin:
        admin.execute(update, ("fresh",))
        try:
            assert kyma_rows(src, "SELECT name FROM src.public.items WHERE id = 3") == [("fresh",)]
        finally:
            admin.execute(update, original)


def test_whole_query_pushed_as_one_statement(src, source_db) -> None:
    answer = src.query.execute(
        "SELECT grp, count(*), avg(price) FROM src.public.items WHERE flag GROUP BY grp"
    )
    groups = len(direct(source_db, "SELECT grp FROM public.items WHERE flag GROUP BY grp"))
    (scan,) = answer.pushdown_summary
    assert scan["residual"] == []
    assert scan["rows_fetched"] == groups == answer.table.num_rows
    assert "GROUP BY" in scan["sql"] and "WHERE items.flag" in scan["sql"]
    assert scan["pushed"]["aggregates"] == ["COUNT(*)", "AVG(items.price)"]


def test_topk_fetches_at_most_k_rows(src, source_db) -> None:
    answer = src.query.execute(
        "SELECT id, name FROM src.public.items ORDER BY name DESC NULLS LAST, id LIMIT 7"
    )
    (scan,) = answer.pushdown_summary
    assert scan["rows_fetched"] == 7
    expected = direct(
        source_db, "SELECT id, name FROM public.items ORDER BY name DESC NULLS LAST, id LIMIT 7"
    )
    assert rows_equal(expected, [tuple(r.values()) for r in answer.table.to_pylist()], True)


def test_topk_under_a_kyma_function_keeps_the_source_order(src, source_db) -> None:
    """ORDER BY text + LIMIT go down; a residual UDF stays above; the source's collation rules."""
    answer = src.query.execute(
        "SELECT id, name, has_token(name, 'apple') AS apple FROM src.public.items"
        " WHERE name IS NOT NULL ORDER BY name, id LIMIT 12"
    )
    (scan,) = answer.pushdown_summary
    assert scan["rows_fetched"] == 12
    assert scan["pushed"]["limit"] == 12
    assert {"expression": "HAS_TOKEN(items.name, 'apple')", "reason": "kyma_udf"} in scan[
        "residual"
    ]
    expected = direct(
        source_db,
        "SELECT id, name FROM public.items WHERE name IS NOT NULL ORDER BY name, id LIMIT 12",
    )
    assert [(r["id"], r["name"]) for r in answer.table.to_pylist()] == expected


def test_pushed_sql_is_what_the_source_ran(src, source_pg) -> None:
    before = source_pg.log_file.read_text(errors="replace")
    answer = src.query.execute("SELECT id FROM src.public.items WHERE qty < -40 AND tag LIKE 'r%'")
    (scan,) = answer.pushdown_summary
    ran = source_pg.log_file.read_text(errors="replace")[len(before) :]
    assert scan["sql"] in ran
    assert (
        scan["pushed"]["filters"] == ["items.qty < -40 AND items.tag LIKE 'r%'"]
        or "qty" in (scan["sql"])
    )


def test_cross_source_join_scans_each_side_at_its_source(src, source_db) -> None:
    src.query.execute("CREATE TABLE visits (user_id long, page string)")
    lines = b"".join(
        b'{"user_id": %d, "page": "p%d"}\n' % (uid, i) for i, uid in enumerate([1, 2, 2, 7, 99])
    )
    src.write_path.ingest_ndjson("visits", lines)
    answer = src.query.execute(
        "SELECT u.name, v.page FROM src.public.users u JOIN visits v ON v.user_id = u.id"
        " WHERE u.country <> 'US' ORDER BY v.page"
    )
    users = dict(direct(source_db, "SELECT id, name FROM public.users WHERE country <> 'US'"))
    expected = [(users[uid], f"p{i}") for i, uid in enumerate([1, 2, 2, 7, 99]) if uid in users]
    assert [tuple(r.values()) for r in answer.table.to_pylist()] == expected
    (scan,) = answer.pushdown_summary
    assert scan["pushed"]["filters"] == ["u.country <> 'US'"]
    assert scan["rows_fetched"] == len(users)
    assert {"reason": "kyma_table", "expression": "visits AS v"} in scan["residual"]


def test_same_source_join_is_one_select(src, source_db) -> None:
    query = (
        "SELECT u.country, count(*), sum(o.amount) FROM {users} u JOIN {orders} o"
        " ON o.user_id = u.id GROUP BY u.country ORDER BY u.country NULLS FIRST"
    )
    answer = src.query.execute(query.format(users="src.public.users", orders="src.public.orders"))
    (scan,) = answer.pushdown_summary
    assert "JOIN public.orders" in scan["sql"]
    expected = direct(source_db, query.format(users="public.users", orders="public.orders"))
    assert rows_equal(expected, [tuple(r.values()) for r in answer.table.to_pylist()], True)


def test_explain_shows_the_pushdown(src) -> None:
    answer = src.query.execute("EXPLAIN SELECT name FROM src.public.users WHERE id = 3")
    kinds, plans = (answer.table.column(i).to_pylist() for i in (0, 1))
    plans = dict(zip(kinds, plans, strict=True))
    assert "WHERE users.id = 3" in plans["kyma pushdown __fed_1"]


def test_explain_analyze_shows_the_sql_sent_rows_fetched_and_the_operators(src) -> None:
    src.query.execute("CREATE TABLE seen (user_id long)")
    src.write_path.ingest_ndjson("seen", b'{"user_id": 3}\n{"user_id": 4}\n')
    for statement in (
        "SELECT name FROM src.public.users WHERE id = 3",
        "SELECT u.name FROM src.public.users u JOIN seen s ON s.user_id = u.id",
    ):
        answer = src.query.execute(f"EXPLAIN ANALYZE {statement}")
        plans = dict(zip(*(answer.table.column(i).to_pylist() for i in (0, 1)), strict=True))
        pushed = json.loads(plans["kyma pushdown __fed_1"])
        assert pushed["sql"].startswith("SELECT") and pushed["rows_fetched"] >= 1
        assert "metrics=" in plans["Plan with Metrics"]
    assert "HashJoinExec" in plans["Plan with Metrics"]  # the join's operators, with metrics
    assert "output_rows=2" in plans["Plan with Metrics"]  # users 3 and 4
    assert "stage 1 catalog: 1/1 extents" in plans["kyma pruning seen"]


def test_pushdown_off_fetches_every_row_and_answers_the_same(src) -> None:
    query = "SELECT id FROM src.public.items WHERE grp = 2 AND qty > 0 ORDER BY id"
    on = src.query.execute(query)
    off = src.query.execute(query, pushdown=False)
    assert on.table.equals(off.table)
    assert off.pushdown_summary[0]["rows_fetched"] == 300
    assert on.pushdown_summary[0]["rows_fetched"] == on.table.num_rows


# ---------------------------------------------------------------- wrong-result regressions


REGRESSIONS = {
    # A filter above a LIMIT must not merge into one WHERE … LIMIT.
    "filter_above_limit": (
        "SELECT * FROM (SELECT id, grp FROM {items} ORDER BY id LIMIT 20) s WHERE s.grp = 1"
        " ORDER BY id"
    ),
    # Integer division truncates toward zero, on negative numbers too.
    "integer_division": "SELECT id, qty / 7, qty % 7 FROM {items} WHERE qty < 0 ORDER BY id",
    # avg(numeric) is exact at the source: 47.5, not 47.50000000000001.
    "avg_numeric": "SELECT avg(price) FROM {items} WHERE price IN (47.50, 47.51, 47.49)",
    # A float SUM depends on the order it adds in; the source's own sum is the answer.
    "float_sum": "SELECT grp, sum(score) FROM {items} GROUP BY grp ORDER BY grp NULLS FIRST",
    # AT TIME ZONE gives the wall time in that zone, whatever the session zone is.
    "at_time_zone": (
        "SELECT id, created_at AT TIME ZONE 'America/New_York' FROM {items}"
        " WHERE id BETWEEN 100 AND 104 ORDER BY id"
    ),
    # Text range comparisons and ORDER BY follow the source's en-US collation.
    "collation_range": (
        "SELECT name FROM {items} WHERE name > 'apple' AND name < 'Zeta' ORDER BY name, id"
    ),
    "collation_order": "SELECT DISTINCT name FROM {items} ORDER BY name DESC NULLS LAST",
    "collation_min_max": "SELECT min(name), max(name), min(tag), max(tag) FROM {items}",
    # NULL placement, both ways.
    "nulls_first": "SELECT id, grp FROM {items} ORDER BY grp NULLS FIRST, id LIMIT 40",
    "nulls_last_desc": "SELECT id, grp FROM {items} ORDER BY grp DESC NULLS LAST, id",
    # LIKE with escapes: the default backslash and an explicit ESCAPE.
    "like_escapes": (
        "SELECT id FROM {items} WHERE name LIKE '%\\%%' OR name LIKE 'a!_%' ESCAPE '!' ORDER BY id"
    ),
}


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_regression_answers_equal_postgres(src, source_db, case) -> None:
    query = REGRESSIONS[case]
    expected = direct(source_db, query.format(items="public.items"))
    actual = kyma_rows(src, query.format(items="src.public.items"))
    assert expected, "a regression case must return rows"
    assert rows_equal(expected, actual, ordered="ORDER BY" in query)


def test_avg_numeric_is_exact(src) -> None:
    (row,) = kyma_rows(src, "SELECT avg(price) FROM src.public.items WHERE price IN (47.50)")
    assert row == (47.5,)


def test_limit_is_not_pushed_into_a_join_input(src) -> None:
    src.query.execute("CREATE TABLE picks (id long)")
    src.write_path.ingest_ndjson("picks", b'{"id": 290}\n{"id": 299}\n')
    answer = src.query.execute(
        "SELECT i.id FROM src.public.items i JOIN picks p ON p.id = i.id ORDER BY i.id LIMIT 2"
    )
    assert answer.table.column("id").to_pylist() == [290, 299]
    (scan,) = answer.pushdown_summary
    assert scan["pushed"]["limit"] is None
    assert {"expression": "ORDER BY i.id LIMIT 2", "reason": "join"} in scan["residual"]


def test_time_24_00_is_the_end_of_the_day(src) -> None:
    rows = src.query.execute(
        "SELECT id, t FROM src.public.times WHERE t IS NOT NULL ORDER BY t"
    ).table.to_pylist()
    assert [r["id"] for r in rows] == [1, 2, 3]
    assert rows[2]["t"].isoformat() == "1970-01-02T00:00:00+00:00"
    later = src.query.execute("SELECT id FROM src.public.times WHERE t > TIME '23:00'").table
    assert later.column("id").to_pylist() == [3]


def test_timestamptz_is_the_same_instant_in_any_session_zone(src, source_db) -> None:
    (row,) = kyma_rows(src, "SELECT created_at FROM src.public.items WHERE id = 100")
    assert row[0].isoformat() == "2024-03-10T07:00:00+00:00"
    # kyma's timestamp literals are UTC: the source session runs in UTC, not New York.
    (count,) = kyma_rows(
        src, "SELECT count(*) FROM src.public.items WHERE created_at >= '2024-03-10 07:00:00'"
    )
    expected = direct(
        source_db,
        "SELECT count(*) FROM public.items WHERE created_at >= '2024-03-10 07:00:00+00'",
    )
    assert count == expected[0]


# ---------------------------------------------------------------- connectors API


def test_connector_api_lifecycle(client, source_pg, source_db, monkeypatch) -> None:
    monkeypatch.setenv(SECRET_ENV, source_db.password)
    body = {
        "name": "pg_prod",
        "type": "postgres",
        "connection": {
            "url": source_db.url,
            "secret_ref": f"$env:{SECRET_ENV}",
            "tls": "verify-full",
            "ca_file": str(source_pg.ca_file),
            "pool_size": 3,
        },
    }
    created = client.post("/v1/connectors", json=body)
    assert created.status_code == 201, created.get_json()
    connector = created.get_json()
    assert connector["state"] == "ready" and connector["connection"]["tls"] == "verify-full"
    by_id = client.get(f"/v1/connectors/{connector['id']}").get_json()
    by_name = client.get("/v1/connectors/pg_prod").get_json()
    assert by_id == by_name
    listed = client.get("/v1/connectors").get_json()["connectors"]
    assert [c["name"] for c in listed] == ["pg_prod"]
    status = client.get("/v1/connectors/pg_prod/status").get_json()
    assert status["state"] == "ready" and status["pool"]["size"] == 3
    assert status["tables_seen"] >= 6  # public.* and billing.invoices
    assert sql(client, "SELECT total FROM pg_prod.billing.invoices WHERE id = 2")["rows"] == [
        [200.5]
    ]
    assert client.post("/v1/connectors", json=body).status_code == 409
    assert client.delete("/v1/connectors/pg_prod").status_code == 204
    assert client.get("/v1/connectors/pg_prod").status_code == 404
    answer = sql(client, "SELECT 1 FROM pg_prod.public.users", 404)
    assert answer["message"] == "no connector named 'pg_prod'"


def test_pooled_connections_hold_no_transaction_open(src, source_db) -> None:
    """An idle pooled connection inside a transaction would block DDL and vacuum at the source."""
    src.query.execute("SELECT count(*) FROM src.public.items")
    states = run_in_postgres(
        source_db.admin_url,
        "SELECT state FROM pg_stat_activity WHERE application_name = 'kyma-federation'",
    )
    assert states and all(state == "idle" for (state,) in states), states


@pytest.fixture
def ids(src):  # type: ignore[no-untyped-def]
    """A kyma table ``ids(kid)`` holding 1..300."""
    src.query.execute("CREATE TABLE ids (kid long)")
    src.write_path.ingest_ndjson("ids", b"".join(b'{"kid": %d}\n' % i for i in range(1, 301)))
    return src


def test_union_of_source_and_kyma_rows(ids) -> None:
    rows = kyma_rows(
        ids,
        "SELECT id FROM src.public.users WHERE id < 3"
        " UNION ALL SELECT kid FROM ids WHERE kid > 298",
    )
    assert sorted(rows) == [(1,), (2,), (299,), (300,)]


def test_correlated_subquery_into_a_source(ids, source_db) -> None:
    rows = kyma_rows(
        ids,
        # DataFusion decorrelates a scalar subquery only when it aggregates: max() here (of a
        # number: MAX of text under the source's ICU collation is refused in kyma).
        "SELECT k.kid, (SELECT max(length(u.name)) FROM src.public.users u WHERE u.id = k.kid)"
        " AS name FROM ids k WHERE k.kid IN (1, 5, 51) ORDER BY k.kid",
    )
    query = "SELECT id, length(name) FROM public.users WHERE id IN (1, 5)"
    names = dict(direct(source_db, query))
    assert rows == [(1, names[1]), (5, names[5]), (51, None)]


def test_in_subquery_at_a_source(ids, source_db) -> None:
    answer = ids.query.execute(
        "SELECT count(*) FROM ids WHERE kid IN"
        " (SELECT user_id FROM src.public.orders WHERE amount > 50)"
    )
    (expected,) = direct(
        source_db, "SELECT count(DISTINCT user_id) FROM public.orders WHERE amount > 50"
    )
    assert answer.table.column(0).to_pylist() == [expected[0]]
    (scan,) = answer.pushdown_summary
    assert scan["residual"] == [] and "WHERE orders.amount > 50" in scan["sql"]


# ---------------------------------------------------------------- found in review


@pytest.fixture
def moods(src, source_db):  # type: ignore[no-untyped-def]
    """``public.moods``: an enum whose order is not its text's, and unconstrained numerics."""
    with psycopg.connect(source_db.admin_url, autocommit=True) as admin:
        admin.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
        admin.execute("CREATE TABLE public.moods (id int PRIMARY KEY, mood mood, big numeric)")
        admin.execute(
            "INSERT INTO public.moods VALUES (1, 'sad', 9), (2, 'ok', 100), (3, 'happy', 10.5)"
        )
        admin.execute("GRANT SELECT ON public.moods TO app")
        try:
            yield src
        finally:
            admin.execute("DROP TABLE public.moods")
            admin.execute("DROP TYPE mood")


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id, mood FROM {moods} ORDER BY mood DESC LIMIT 1",
        "SELECT id, big FROM {moods} ORDER BY big DESC LIMIT 2",
        "SELECT DISTINCT mood FROM {moods} ORDER BY mood",
        "SELECT big, count(*) FROM {moods} GROUP BY big ORDER BY big",
    ],
)
def test_converted_outputs_keep_the_source_order(moods, source_db, query) -> None:
    """Outputs converted for kyma (enum → text) must not change what ORDER BY sorts on."""
    expected = direct(source_db, query.format(moods="public.moods"))
    # Unconstrained numeric reads as an exact decimal: compare by value.
    assert rows_equal(expected, kyma_rows(moods, query.format(moods="src.public.moods")), True)


@pytest.mark.parametrize(
    "query",
    [
        # A LIMIT must not go below a function that changes the row count.
        "SELECT count(*) FROM (SELECT unnest(CASE WHEN id % 2 = 0 THEN NULL ELSE ARRAY[id] END)"
        " FROM {items} LIMIT 3) AS s",
        "SELECT grp FROM {items} INTERSECT ALL SELECT x FROM {nopk}",
        "SELECT grp FROM {items} EXCEPT ALL SELECT x FROM {nopk}",
        "SELECT s.count FROM (SELECT grp, count(*) FROM {items} GROUP BY grp) AS s",
        "SELECT grp, count(*) FROM {items} GROUP BY grp ORDER BY count, grp",
        "SELECT n.a FROM {nopk} AS n(a) WHERE n.a > 1",
    ],
)
def test_review_cases_equal_postgres(src, source_db, query) -> None:
    names = {"items": "public.items", "nopk": "public.nopk"}
    expected = direct(source_db, query.format(**names))
    actual = kyma_rows(src, query.format(**{k: f"src.{v}" for k, v in names.items()}))
    assert rows_equal(expected, actual, ordered="ORDER BY" in query)


def test_nested_join_of_source_tables_keeps_its_shape(ids, source_db) -> None:
    rows = kyma_rows(
        ids,
        "SELECT k.kid, o.id FROM ids k LEFT JOIN (src.public.users u JOIN src.public.orders o"
        " ON o.user_id = u.id) ON u.id = k.kid WHERE k.kid <= 2 ORDER BY 1, 2",
    )
    expected = direct(
        source_db,
        "SELECT u.id, o.id FROM public.users u JOIN public.orders o ON o.user_id = u.id"
        " WHERE u.id <= 2 ORDER BY 1, 2",
    )
    assert rows == expected


def test_tablesample_on_a_source_is_refused(src) -> None:
    with pytest.raises(UnsupportedStatementError, match="TABLESAMPLE"):
        src.query.execute("SELECT count(*) FROM src.public.items TABLESAMPLE SYSTEM (0)")


def test_a_subquery_without_tables_runs_where_its_parent_runs(src) -> None:
    rows = kyma_rows(
        src, "SELECT id FROM src.public.users WHERE (SELECT has_token('a b', 'a')) AND id < 3"
    )
    assert sorted(rows) == [(1,), (2,)]


def test_repeated_names_in_a_pushed_derived_table(ids, source_db) -> None:
    rows = kyma_rows(
        ids,
        "SELECT count(*), sum(s.amount) FROM (SELECT u.id, o.id, o.amount FROM src.public.users u"
        " JOIN src.public.orders o ON o.user_id = u.id) AS s JOIN ids ON ids.kid = 1",
    )
    expected = direct(
        source_db,
        "SELECT count(*), sum(o.amount) FROM public.users u"
        " JOIN public.orders o ON o.user_id = u.id",
    )
    assert rows == expected  # numeric sums stay exact decimals


def test_order_by_expression_over_a_shadowed_input_is_refused_not_misread(src, source_db) -> None:
    """In Postgres ``qty`` inside ``qty + 0`` is the input column, though an output is named
    qty. Pushed whole (abs is pushable), Postgres binds it; in the residual, DataFusion
    refuses the ambiguity: an error, where binding the output alias would give wrong rows."""
    query = "SELECT id, -qty AS qty, abs(id) FROM {} ORDER BY qty + 0, id LIMIT 5"
    expected = direct(source_db, query.format("public.items"))
    assert kyma_rows(src, query.format("src.public.items")) == expected
    with pytest.raises(SqlError, match="ambiguous"):
        src.query.execute(query.format("src.public.items"), pushdown=False)


def test_pushed_sql_matches_the_fixtures(src) -> None:
    """tests/fixtures/pushdown.sql: each statement, parsed and rewritten by kyma's front end,
    and the SQL the PushdownPlanner sends to the source (scans joined by `` ; ``)."""
    wrong = []
    for case in cases("pushdown.sql"):
        statement, expected = case.values
        plan = src.connectors.plan(parse(statement), {}, pushdown=True)
        scans = [plan.whole] if plan.whole is not None else plan.scans
        pushed = " ; ".join(scan.summary()["sql"] for scan in scans)
        if pushed != expected:
            wrong.append(f"{case.id}:\n  {statement}\n  {pushed}")
    assert not wrong, "\n".join(wrong)


def test_a_view_over_a_source_table_reads_the_source_now(src, source_db) -> None:
    query = "SELECT id, name FROM {} WHERE grp = 3"
    src.query.execute(f"CREATE VIEW grp3 AS {query.format('src.public.items')}")
    expected = direct(source_db, query.format("public.items") + " ORDER BY id")
    assert expected
    assert rows_equal(expected, kyma_rows(src, "SELECT * FROM grp3 ORDER BY id"), ordered=True)
    needs: list = []
    src.query.execute("SELECT count(*) FROM grp3", authorize=needs.append)
    assert any(n.tables and "src.public.items" in n.tables for n in needs), needs
    assert any(n.tables and "grp3" in n.tables for n in needs), needs
