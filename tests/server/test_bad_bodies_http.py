"""Every body of the bad-body corpus, through HTTP: a 4xx naming line and field, nothing
committed, and the server keeps serving."""

from __future__ import annotations

import pytest
from bad_bodies import CASES, Bad

# The corpus table, as a client would create it (every column is nullable over SQL).
DDL = (
    "CREATE TABLE bad (b bool, i int, l long, r real, s string, t timestamp,"
    " v vector(3), d dynamic, nn long)"
)
# Over HTTP, "nn" is nullable and "extra" becomes an evolved column: only these cases ask
# something the SQL-made table does not forbid.
HTTP_CASES = [c for c in CASES if c.field not in ("nn", "extra")]


@pytest.fixture
def bad_table(client):
    assert client.post("/v1/query", json={"sql": DDL}).status_code == 200
    assert client.post("/v1/ingest/bad", data=b'{"i": 1}\n{"i": 2}').status_code == 200
    return client


def test_most_of_the_corpus_applies_over_http() -> None:
    assert len(HTTP_CASES) >= 100


@pytest.mark.parametrize("case", HTTP_CASES, ids=[c.name[:60] for c in HTTP_CASES])
def test_bad_body_is_refused_and_changes_nothing(bad_table, case: Bad) -> None:
    before = bad_table.get("/v1/tables/bad").get_json()
    answer = bad_table.post("/v1/ingest/bad", data=case.body)
    assert answer.status_code == 400, answer.get_json()
    error = answer.get_json()
    assert error["error"] == "ingest_error"
    assert error.get("line") == case.line
    assert error.get("field") == case.field
    after = bad_table.get("/v1/tables/bad").get_json()
    assert (after["rows"], after["snapshot_id"], after["columns"]) == (
        before["rows"],
        before["snapshot_id"],
        before["columns"],
    )
