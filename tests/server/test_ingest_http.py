"""POST /v1/ingest/<table>: coercion end to end, evolution, idempotency, encodings, limits."""

from __future__ import annotations

import gzip
import json
import threading

import pytest
import zstandard
from http_helpers import post_lines as post
from http_helpers import sql
from hypothesis import given
from hypothesis import strategies as st

from kyma.engine.errors import LimitExceededError
from kyma.server.ingest import check_lines


@pytest.fixture
def typed(client):
    sql(
        client,
        "CREATE TABLE typed (b bool, i int, l long, r double precision, s string, t timestamp,"
        " v vector(2), d dynamic)",
    )
    return client


def test_every_type_end_to_end(typed) -> None:
    ack = post(
        typed,
        "typed",
        [
            {
                "_timestamp": "2026-01-01T00:00:00Z",
                "b": True,
                "i": -2147483648,
                "l": 2**62,
                "r": 1.5,
                "s": "text",
                "t": "2026-01-01T00:00:00.123456789+01:00",
                "v": [1, 2.5],
                "d": {"a": [1, {"b": None}]},
            },
            {"_timestamp": 1767225600000000001, "b": None, "i": 7, "s": 42, "t": 5, "d": "x"},
            {"_timestamp": "2026-01-01T00:00:02Z"},
        ],
    )
    assert ack["rows"] == 3 and ack["replayed"] is False and ack["new_columns"] == []
    rows = sql(typed, "SELECT b, i, l, r, s, t, v, d, _timestamp FROM typed ORDER BY _timestamp")
    assert rows["rows"] == [
        [
            True,
            -2147483648,
            2**62,
            1.5,
            "text",
            "2025-12-31T23:00:00.123456789Z",
            [1.0, 2.5],
            {"a": [1, {"b": None}]},
            "2026-01-01T00:00:00.000000000Z",
        ],
        [
            None,
            7,
            None,
            None,
            "42",
            "1970-01-01T00:00:00.000000005Z",
            None,
            "x",
            "2026-01-01T00:00:00.000000001Z",
        ],
        [None, None, None, None, None, None, None, None, "2026-01-01T00:00:02.000000000Z"],
    ]
    assert [c["type"] for c in rows["columns"]] == [
        "bool",
        "int",
        "long",
        "real",
        "string",
        "timestamp",
        "vector(2)",
        "dynamic",
        "timestamp",
    ]


def test_missing_timestamp_is_ingest_time(typed) -> None:
    post(typed, "typed", [{"i": 1}])
    answer = sql(typed, "SELECT count(*) FROM typed WHERE _timestamp > now() - INTERVAL '1 minute'")
    assert answer["rows"] == [[1]]


def test_schema_evolution_caps_at_32_and_overflows_into_props(client) -> None:
    sql(client, "CREATE TABLE ev (x long)")
    row = {f"f{i:02d}": i for i in range(40)}
    row.update({"Bad-Name": 1, "2lead": 2, "x": 3})
    ack = post(client, "ev", [row])
    assert ack["new_columns"] == [f"f{i:02d}" for i in range(32)]
    assert ack["props_fields"] == [f"f{i:02d}" for i in range(32, 40)] + ["Bad-Name", "2lead"]
    described = sql(client, "DESCRIBE ev")["rows"]
    assert [r[:2] for r in described[3:5]] == [["f00", "string"], ["f01", "string"]]
    answer = sql(client, "SELECT f00, f31, props FROM ev")
    assert answer["rows"] == [
        ["0", "31", {**{f"f{i}": i for i in range(32, 40)}, "Bad-Name": 1, "2lead": 2}]
    ]


def test_old_extents_read_null_for_new_columns(client) -> None:
    sql(client, "CREATE TABLE ev (x long)")
    post(client, "ev", [{"x": 1}])
    post(client, "ev", [{"x": 2, "later": "yes"}])
    assert sql(client, "SELECT x, later FROM ev ORDER BY x")["rows"] == [[1, None], [2, "yes"]]


def test_schema_evolve_false_drops_unknown_fields(client) -> None:
    sql(client, "CREATE TABLE ev (x long)")
    ack = post(client, "ev", [{"x": 1, "extra": 2}], query_string={"schema_evolve": "false"})
    assert ack["dropped_fields"] == ["extra"] and ack["new_columns"] == []
    assert len(sql(client, "DESCRIBE ev")["rows"]) == 3


def test_a_missing_table_is_created_only_when_asked(client) -> None:
    refused = post(client, "fresh", [{"x": 1}], 404)
    assert "does not exist" in refused["message"] and "?create=true" in refused["message"]
    assert post(client, "fresh", [{"x": 1}], 400, query_string={"create": "maybe"})
    both = {"create": "true", "schema_evolve": "false"}
    assert "schema_evolve" in post(client, "fresh", [{"x": 1}], 400, query_string=both)["message"]
    assert sql(client, "SHOW TABLES")["rows"] == []  # nothing was created by the refusals
    ack = post(client, "fresh", [{"x": 1, "s": "a"}], query_string={"create": "true"})
    assert sorted(ack["new_columns"]) == ["s", "x"]
    post(client, "fresh", [{"x": 2, "later": True}], query_string={"create": "true"})
    answer = sql(client, "SELECT x, s, later FROM fresh ORDER BY x")
    assert answer["rows"] == [["1", "a", None], ["2", None, "true"]]  # evolved: strings


def test_the_setting_creates_missing_tables_by_default(services) -> None:
    import dataclasses

    from kyma.server import create_app

    services.settings = dataclasses.replace(services.settings, ingest_create_tables=True)
    client = create_app(services).test_client()
    post(client, "auto", [{"n": 7}])
    assert sql(client, "SELECT n FROM auto")["rows"] == [["7"]]
    assert post(client, "other", [{"n": 1}], 404, query_string={"create": "false"})


def test_idempotent_replay_returns_the_original_ack(client) -> None:
    sql(client, "CREATE TABLE t (x long)")
    headers = {"X-Idempotency-Key": "tenant:t:1"}
    first = post(client, "t", [{"x": 1}], headers=headers)
    again = post(client, "t", [{"x": 1}], headers=headers)
    assert again == {**first, "replayed": True}
    assert sql(client, "SELECT count(*) FROM t")["rows"] == [[1]]
    reused = post(client, "t", [{"x": 2}], 422, headers=headers)
    assert reused["error"] == "idempotency_key_reused"
    assert post(client, "t", [{"x": 1}], 400, headers={"X-Idempotency-Key": "k" * 256})


def test_concurrent_requests_with_one_key_ingest_once(services) -> None:
    from kyma.server import create_app

    app = create_app(services)
    app.test_client().post("/v1/query", json={"sql": "CREATE TABLE t (x long)"})
    body = "\n".join(json.dumps({"x": i}) for i in range(5000)).encode()
    answers: list[dict] = []

    def send() -> None:
        answer = app.test_client().post(
            "/v1/ingest/t", data=body, headers={"X-Idempotency-Key": "same"}
        )
        answers.append({"status": answer.status_code, **answer.get_json()})

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(a["status"] for a in answers) == [200] * 4
    assert sorted(a["replayed"] for a in answers) == [False, True, True, True]
    assert len({a["snapshot_id"] for a in answers}) == 1
    count = app.test_client().post("/v1/query", json={"sql": "SELECT count(*) FROM t"})
    assert count.get_json()["rows"] == [[5000]]


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_compressed_bodies(client, encoding) -> None:
    sql(client, "CREATE TABLE t (x long)")
    raw = "\n".join(json.dumps({"x": i}) for i in range(10_000)).encode()
    packed = gzip.compress(raw) if encoding == "gzip" else zstandard.compress(raw)
    answer = client.post("/v1/ingest/t", data=packed, headers={"Content-Encoding": encoding})
    assert answer.status_code == 200 and answer.get_json()["rows"] == 10_000
    truncated = client.post(
        "/v1/ingest/t", data=packed[: len(packed) // 2], headers={"Content-Encoding": encoding}
    )
    assert truncated.status_code == 400
    assert "truncated" in truncated.get_json()["message"]
    assert sql(client, "SELECT count(*) FROM t")["rows"] == [[10_000]]


def test_limits_answer_413_naming_the_limit(client, services) -> None:
    sql(client, "CREATE TABLE t (s string)")
    long_line = json.dumps({"s": "x" * (services.settings.max_line_bytes + 1)})
    answer = post(client, "t", [{"s": "ok"}, long_line], 413)
    assert answer["limit"] == "max_line_bytes" and "line 2" in answer["message"]
    bomb = gzip.compress(b" " * (services.settings.max_body_bytes + 10))
    answer = client.post("/v1/ingest/t", data=bomb, headers={"Content-Encoding": "gzip"})
    assert answer.status_code == 413 and answer.get_json()["limit"] == "max_body_bytes"
    assert sql(client, "SELECT count(*) FROM t")["rows"] == [[0]]


def test_a_large_request_is_one_snapshot(client) -> None:
    sql(client, "CREATE TABLE t (x long, s string)")
    post(client, "t", [{"x": i, "s": f"row {i}"} for i in range(20_000)])
    info = client.get("/v1/tables/t").get_json()
    assert (info["rows"], info["extents"]) == (20_000, 1)


def test_tables_api(client) -> None:
    created = client.post(
        "/v1/tables", json={"name": "api", "columns": [{"name": "x", "type": "long"}]}
    )
    assert created.status_code == 201
    assert created.get_json()["columns"][2] == {
        "name": "x",
        "type": "long",
        "default": False,
        "evolved_from": None,
    }
    assert client.get("/v1/tables").get_json()["tables"][0]["name"] == "api"
    bad = client.post("/v1/tables", json={"name": "b", "columns": [{"name": "x", "type": "money"}]})
    assert bad.status_code == 400 and "unknown type 'money'" in bad.get_json()["message"]
    assert client.get("/v1/tables/nope").status_code == 404
    assert post(client, "nope", [{"x": 1}], 404)["error"] == "not_found_error"


@given(
    lengths=st.lists(st.integers(0, 40), min_size=1, max_size=30),
    limit=st.integers(1, 24),
)
def test_line_limit_names_the_first_longest_line_wherever_it_falls(
    lengths: list[int], limit: int
) -> None:
    """``check_lines`` (one native pass over the body) refuses exactly the bodies, and
    names exactly the line, that the lengths of ``body.split(b"\\n")`` do."""
    body = b"\n".join(b"x" * n for n in lengths)
    longest = max(lengths)
    if longest <= limit:
        check_lines(body, limit, len(lengths))
        return
    with pytest.raises(LimitExceededError) as refused:
        check_lines(body, limit, len(lengths))
    line = lengths.index(longest) + 1
    assert str(refused.value) == (f"line {line} is {longest} bytes, over max_line_bytes={limit}")
