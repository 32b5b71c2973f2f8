"""The typed-evolution surface: table options, DESCRIBE's evolved_from, evolved(), stats."""

from __future__ import annotations

import pyarrow as pa
from http_helpers import post_lines, sql
from typed_helpers import batches, evolved_columns, typed_table

from kyma.engine.types import KymaType


def test_option_by_create_alter_and_rest(client) -> None:
    typed_table(client, "a")
    assert client.get("/v1/tables/a").get_json()["options"] == {"schema_evolution": "typed"}
    sql(client, "CREATE TABLE b (x long)")
    sql(client, "ALTER TABLE b SET (schema_evolution = 'typed')")
    post_lines(client, "b", [{"n": 1}])
    assert evolved_columns(client, "b")["n"] == ("long", None)
    created = client.post("/v1/tables", json={"name": "c", "schema_evolution": "typed"})
    assert created.status_code == 201 and created.get_json()["options"]["schema_evolution"]
    created = client.post("/v1/tables", json={"name": "d", "options": {"schema_evolution": "x"}})
    assert created.status_code == 400 and "expected one of" in created.get_json()["message"]
    bad = sql(client, "CREATE TABLE e (x long) WITH (colour = 'red')", status=400)
    assert "unknown table option 'colour'" in bad["message"]
    sql(client, "ALTER TABLE b SET (schema_evolution = 'string')")
    post_lines(client, "b", [{"m": 1}])
    assert evolved_columns(client, "b")["m"] == ("string", None)


def test_evolved_function_coalesces_the_variants(client) -> None:
    typed_table(client)
    batches(client, [{"my_field": 4}], [{"my_field": "four"}], [{"my_field": 2.5}])
    columns = evolved_columns(client)
    assert columns["my_field_string"] == ("string", "my_field")
    answer = sql(client, "SELECT evolved(my_field) FROM t ORDER BY _timestamp")
    assert answer["columns"][0]["name"] == "my_field"
    assert [r[0] for r in answer["rows"]] == ["4", "four", "2.5"]
    where = sql(client, "SELECT count(*) FROM t WHERE evolved(my_field) = 'four'")
    assert where["rows"] == [[1]]
    missing = sql(client, "SELECT evolved(nope) FROM t", status=404)
    assert "evolved(nope)" in missing["message"]


def test_stats_endpoint_counts_rows_nulls_types_and_snapshots(client) -> None:
    typed_table(client)
    first = post_lines(client, "t", [{"size": 4}, {"other": 1}])["snapshot_id"]
    last = post_lines(client, "t", [{"size": 2.5}, {"size": True}])["snapshot_id"]
    stats = client.get("/v1/tables/t/stats").get_json()
    by_name = {c["name"]: c for c in stats["columns"]}
    assert by_name["size"] | {} == {
        "name": "size",
        "type": "long",
        "evolved_from": None,
        "rows": 4,
        "nulls": 2,
        "types_seen": ["boolean", "long"],
        "first_seen_snapshot": first,
        "last_seen_snapshot": last,
    }
    assert by_name["size_double"]["types_seen"] == ["boolean", "double"]
    assert by_name["size_double"]["evolved_from"] == "size"
    assert by_name["size_double"]["rows"] == 2
    assert client.get("/v1/tables/nope/stats").status_code == 404


def test_stats_for_string_tables_and_failed_requests(client) -> None:
    sql(client, "CREATE TABLE s (x long)")
    post_lines(client, "s", [{"x": 1}, {"x": None}])
    post_lines(client, "s", [{"x": "bad"}], status=400)
    x = {c["name"]: c for c in client.get("/v1/tables/s/stats").get_json()["columns"]}["x"]
    assert (x["rows"], x["nulls"], x["types_seen"]) == (2, 1, ["long"])


def test_array_types_in_ddl_and_the_format(client, services) -> None:
    sql(client, "CREATE TABLE arr (a array(long), b bigint[], c array(array(timestamp)))")
    assert evolved_columns(client, "arr") == {
        "a": ("array(long)", None),
        "b": ("array(long)", None),
        "c": ("array(array(timestamp))", None),
    }
    post_lines(client, "arr", [{"a": [1, None], "b": [], "c": [["2026-01-01T00:00:00Z"]]}])
    bad = post_lines(client, "arr", [{"a": ["x"]}], status=400)
    assert bad["field"] == "a" and "expected long" in bad["message"]
    assert sql(client, "SELECT a, b FROM arr")["rows"] == [[[1, None], []]]
    assert KymaType.from_arrow(pa.list_(pa.list_(pa.int64()))) == KymaType("array(array(long))")
