"""SELECT through POST /v1/query: extensions, the cascade's stats, time travel, Arrow."""

from __future__ import annotations

import pyarrow as pa
import pytest
from http_helpers import post_lines as ingest
from http_helpers import sql

T0 = "2026-01-01T00:00:00Z"


@pytest.fixture
def logs(client):
    sql(
        client,
        "CREATE TABLE logs (service_name string, message string, duration long,"
        " embedding vector(3), attributes dynamic)",
    )
    for hour in range(3):
        rows = [
            {
                "_timestamp": f"2026-01-01T0{hour}:{minute:02d}:00Z",
                "service_name": f"svc-{hour}",
                "message": f"request {minute} {'timeout' if minute % 10 == 0 else 'ok'}",
                "duration": hour * 100 + minute,
                "embedding": [1.0, float(minute), 0.0],
                "attributes": {"http": {"method": "GET" if minute % 2 else "POST"}, "n": minute},
            }
            for minute in range(60)
        ]
        ingest(client, "logs", rows)
    return client


def test_select_with_aggregates_windows_and_ctes(logs) -> None:
    answer = sql(
        logs,
        "WITH per AS (SELECT service_name, count(*) AS n, max(duration) AS top FROM logs"
        " GROUP BY service_name) SELECT service_name, n, top,"
        " rank() OVER (ORDER BY top DESC) AS r FROM per ORDER BY service_name",
    )
    assert [c["name"] for c in answer["columns"]] == ["service_name", "n", "top", "r"]
    assert answer["rows"] == [["svc-0", 60, 59, 3], ["svc-1", 60, 159, 2], ["svc-2", 60, 259, 1]]
    assert answer["stats"]["extents_total"] == 3


def test_needle_query_prunes_extents_and_blocks(logs) -> None:
    answer = sql(
        logs,
        "SELECT duration FROM logs WHERE service_name = 'svc-1' AND has_token(message, 'timeout')"
        " AND _timestamp >= '2026-01-01T01:15:00Z' AND _timestamp < '2026-01-01T01:45:00Z'"
        " ORDER BY duration",
    )
    assert answer["rows"] == [[120], [130], [140]]
    stats = answer["stats"]
    assert (stats["extents_total"], stats["extents_after_catalog"]) == (3, 1)
    assert stats["rows_scanned"] <= 60


def test_dynamic_paths_and_casts(logs) -> None:
    answer = sql(
        logs,
        "SELECT attributes['http']['method'] AS m, count(*) AS c, sum(attributes['n']::long) AS s"
        " FROM logs WHERE service_name = 'svc-0' GROUP BY m ORDER BY m",
    )
    assert answer["rows"] == [["GET", 30, 900], ["POST", 30, 870]]
    missing = sql(logs, "SELECT count(*) FROM logs WHERE attributes['nope'] IS NOT NULL")
    assert missing["rows"] == [[0]]
    assert missing["stats"]["extents_after_catalog"] == 0
    whole = sql(logs, "SELECT attributes FROM logs WHERE duration = 7")
    assert whole["rows"] == [[{"http": {"method": "GET"}, "n": 7}]]


def test_result_columns_are_named_as_postgres_names_them(logs) -> None:
    answer = sql(
        logs,
        "SELECT service_name, count(*), max(duration), 1 + 1, attributes['http']['method'],"
        " attributes['n']::long, duration::string, duration AS d FROM logs"
        " GROUP BY service_name, attributes['http']['method'], attributes['n'], duration"
        " LIMIT 1",
    )
    names = [c["name"] for c in answer["columns"]]
    assert names == ["service_name", "count", "max", "?column?", "method", "n", "duration", "d"]
    assert answer["columns"][5]["type"] == "long"


def test_cosine_distance_top_k(logs) -> None:
    answer = sql(
        logs,
        "SELECT duration, cosine_distance(embedding, [1.0, 0.0, 0.0]) AS d FROM logs"
        " ORDER BY d, duration LIMIT 3",
    )
    assert answer["rows"] == [[0, 0.0], [100, 0.0], [200, 0.0]]


def test_ilike_and_has_token(logs) -> None:
    ilike = sql(logs, "SELECT count(*) FROM logs WHERE message ILIKE '%TIMEOUT%'")
    token = sql(logs, "SELECT count(*) FROM logs WHERE has_token(message, 'Timeout')")
    assert ilike["rows"] == token["rows"] == [[18]]


def test_time_travel(logs) -> None:
    first = logs.get("/v1/tables/logs").get_json()["snapshot_id"]
    snapshots = sql(logs, f"SELECT count(*) FROM logs AS OF SNAPSHOT {first - 2}")
    assert snapshots["rows"] == [[60]]
    by_field = sql(logs, "SELECT count(*) FROM logs", snapshot=first - 1)
    assert by_field["rows"] == [[120]]
    assert sql(logs, "SELECT count(*) FROM logs")["rows"] == [[180]]
    assert "no snapshot" in sql(logs, "SELECT * FROM logs AS OF SNAPSHOT 999999", 404)["message"]


def test_timestamps_render_as_rfc3339(logs) -> None:
    answer = sql(logs, "SELECT _timestamp FROM logs WHERE duration = 101")
    assert answer["rows"] == [["2026-01-01T01:01:00.000000000Z"]]
    assert answer["columns"] == [{"name": "_timestamp", "type": "timestamp"}]


def test_arrow_stream_answer(logs) -> None:
    answer = logs.post(
        "/v1/query",
        json={"sql": "SELECT service_name, duration FROM logs ORDER BY duration LIMIT 5"},
        headers={"Accept": "application/vnd.apache.arrow.stream"},
    )
    assert answer.status_code == 200
    assert answer.mimetype == "application/vnd.apache.arrow.stream"
    table = pa.ipc.open_stream(answer.data).read_all()
    assert table.column("duration").to_pylist() == [0, 1, 2, 3, 4]


def test_explain_shows_the_cascade_and_the_plan(logs) -> None:
    answer = sql(logs, "EXPLAIN SELECT duration FROM logs WHERE service_name = 'svc-2'")
    kinds = [row[0] for row in answer["rows"]]
    assert kinds[0] == "kyma pruning logs"
    assert "stage 1 catalog: 1/3 extents" in answer["rows"][0][1]
    assert "physical_plan" in kinds


def test_explain_analyze_runs_and_shows_each_part(logs) -> None:
    statement = "SELECT service_name, count(*) FROM logs WHERE service_name = 'svc-2' GROUP BY 1"
    answer = sql(logs, f"EXPLAIN ANALYZE {statement}")
    assert answer["status"] == "EXPLAIN"
    rows = dict((kind, plan) for kind, plan in answer["rows"])
    assert "stage 1 catalog: 1/3 extents" in rows["kyma pruning logs"]
    # DataFusion's operators with what they did: output rows and time of each
    metrics = rows["Plan with Metrics"]
    assert "AggregateExec" in metrics and "output_rows=1" in metrics
    assert "elapsed_compute=" in metrics
    assert answer["rows"][-1][0] == "kyma elapsed" and answer["rows"][-1][1].endswith(" ms")
    assert answer["stats"]["extents_after_catalog"] == 1
    for spelling in ("EXPLAIN ANALYSE", "explain analyze"):
        assert sql(logs, f"{spelling} {statement}")["rows"][0][0] == "kyma pruning logs"


@pytest.mark.parametrize(
    ("statement", "status", "fragment"),
    [
        ("SELECT nope FROM logs", 404, "nope"),
        ("SELECT * FROM missing", 404, "'missing' does not exist"),
        ("SELECT FROM WHERE", 400, "syntax error"),
        ("SELECT 1 +", 400, "+ is incomplete: an expression is missing after it"),
        ("SELECT 1 WHERE", 400, "column 14: WHERE is incomplete: an expression is missing"),
        ("SELEC 1", 400, "column 1: unknown word 'SELEC' (did you mean SELECT?)"),
        ("SELECT * FORM logs", 400, "unexpected 'logs' after 'FORM' (did you mean FROM?)"),
        ("SELECT count(* FROM logs", 400, "expected ')' before 'FROM'"),
        ("SELECT * FROM logs WHERE service_name = 'x'; DROP TABLE logs", 400, "one statement"),
        ("SELECT cosine_distance(embedding, [1.0]) FROM logs", 400, "query vector has 1"),
        ("SELECT * FROM pg.public.users", 404, "no connector named 'pg'"),
        ("SELECT * FROM public.users", 400, "<connector>.<schema>.<table>"),
    ],
)
def test_query_mistakes_are_4xx(logs, statement, status, fragment) -> None:
    answer = sql(logs, statement, status)
    assert fragment in answer["message"]
    assert "<class" not in answer["message"] and "sqlglot" not in answer["message"]
    assert sql(logs, "SELECT count(*) FROM logs")["rows"] == [[180]]


def test_injection_through_names_and_literals_stays_data(logs) -> None:
    sql(logs, "SELECT count(*) FROM logs WHERE service_name = 'x''; DROP TABLE kyma.tables; --'")
    sql(logs, """SELECT attributes['a''] ; DROP TABLE kyma.tables; --'] FROM logs""")
    sql(logs, 'SELECT * FROM "logs; DROP TABLE kyma.tables"', 404)
    assert sql(logs, "SHOW TABLES")["rows"][0][0] == "logs"
    assert sql(logs, "SELECT count(*) FROM logs")["rows"] == [[180]]
