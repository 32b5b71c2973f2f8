"""Regressions from review: each once returned a wrong answer, lost data or crashed."""

from __future__ import annotations

import gzip
import json

import pytest
import sqlglot
import zstandard
from http_helpers import sql

from kyma.engine.query._lower import lower
from kyma.engine.query.rewrite import rewrite
from kyma.engine.types import KymaType


def both(client, text: str) -> list:
    """The answer with pruning, asserted equal to the answer without."""
    pruned = sql(client, text)["rows"]
    assert pruned == sql(client, text, pruning=False)["rows"]
    return pruned


@pytest.fixture
def t(client):
    sql(client, "CREATE TABLE t (s string, m string, n long, a dynamic)")
    rows = [
        {"s": "auth", "m": "plan a failed", "n": 5, "a": {"x": 1}},
        {"s": "auth", "m": "login timeout", "n": 5, "a": {"x": 2}},
    ]
    body = "\n".join(json.dumps(r) for r in rows)
    assert client.post("/v1/ingest/t", data=body).status_code == 200
    return client


def test_not_over_a_partly_lowered_and_keeps_matching_rows(t) -> None:
    rows = both(t, "SELECT m FROM t WHERE NOT (s = 'auth' AND m ILIKE '%timeout%')")
    assert rows == [["plan a failed"]]
    where = sqlglot.parse_one("SELECT 1 FROM t WHERE NOT (t.s = 'x' AND t.m ILIKE '%y%')")
    condition = rewrite(where).args["where"].this
    assert lower(condition, "t", {"s": KymaType("string"), "m": KymaType("string")}) is None


def test_one_character_tokens_are_not_pruned_away(t) -> None:
    assert both(t, "SELECT m FROM t WHERE has_token(m, 'a')") == [["plan a failed"]]


def test_paths_deeper_than_recorded_are_not_pruned(client) -> None:
    sql(client, "CREATE TABLE d (a dynamic)")
    deep: dict = {"i": 1}
    for key in "hgfedcba":
        deep = {key: deep}
    assert client.post("/v1/ingest/d", data=json.dumps({"a": deep})).status_code == 200
    path = "".join(f"['{k}']" for k in "abcdefghi")
    assert both(client, f"SELECT count(*) FROM d WHERE a{path} IS NOT NULL") == [[1]]


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_concatenated_members_are_all_ingested(client, encoding) -> None:
    sql(client, "CREATE TABLE c (n long)")
    pack = gzip.compress if encoding == "gzip" else zstandard.compress
    body = pack(b'{"n": 1}\n') + pack(b'{"n": 2}\n')
    answer = client.post("/v1/ingest/c", data=body, headers={"Content-Encoding": encoding})
    assert answer.status_code == 200 and answer.get_json()["rows"] == 2
    assert sql(client, "SELECT sum(n) FROM c")["rows"] == [[3]]


def test_nul_characters_are_stored_and_found(client) -> None:
    sql(client, "CREATE TABLE z (s string, a dynamic)")
    body = json.dumps({"s": "a\u0000b", "a": {"k\u0000": 1}})
    answer = client.post("/v1/ingest/z", data=body)
    assert answer.status_code == 200, answer.get_json()
    assert both(client, "SELECT count(*) FROM z WHERE s = 'x'") == [[0]]
    assert sql(client, "SELECT s FROM z")["rows"] == [["a\u0000b"]]


def test_answers_render_as_json(t) -> None:
    answer = sql(
        t,
        "SELECT sha256(s) AS h, _timestamp AT TIME ZONE 'Europe/Paris' AS paris,"
        " array_agg(_timestamp) OVER () AS all_ts, INTERVAL '1 day' AS i,"
        " [1.0, 'NaN'::double] AS f, a FROM t WHERE n = 5 LIMIT 1",
    )
    h, paris, all_ts, interval, floats, a = answer["rows"][0]
    assert isinstance(h, str) and len(h) == 44  # base64 of 32 bytes, not CBOR
    utc = sql(t, "SELECT _timestamp FROM t LIMIT 1")["rows"][0][0]
    assert paris == utc and paris.endswith("Z")
    assert all_ts[0].endswith("Z") and interval == [0, 1, 0]
    assert floats == [1.0, None]
    assert a in ({"x": 1}, {"x": 2})
    assert [c["type"] for c in answer["columns"]][0] == "binary"


@pytest.mark.parametrize(
    ("statement", "extra", "status", "fragment"),
    [
        ("SELECT * FROM t AS OF SNAPSHOT 1.5", {}, 400, "expects a snapshot id"),
        ("SELECT kyma_dyn_get(a, 'x') FROM t", {}, 400, "JSON array of keys"),
        ("SELECT * FROM t", {"snapshot": 999999}, 404, "no table in the query has snapshot"),
    ],
)
def test_odd_requests_are_4xx(t, statement, extra, status, fragment) -> None:
    assert fragment in sql(t, statement, status, **extra)["message"]
