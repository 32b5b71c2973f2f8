"""Two ``kyma serve`` processes on one catalog and one S3 bucket, as docs/operations/scale-out.md
describes them: what one commits the other reads, an idempotency key holds across both, and a
table one creates the other has."""

from __future__ import annotations

import json
from pathlib import Path

from serve_helpers import Serve, request


def _ingest(serve: Serve, table: str, rows: list[dict], key: str) -> dict:
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    status, _, answer = request(f"{serve.url}/v1/ingest/{table}", body, {"X-Idempotency-Key": key})
    assert status == 200, answer
    return json.loads(answer)


def test_two_nodes_share_one_catalog_and_bucket(catalog_url: str, s3_store, tmp_path: Path) -> None:
    env = {
        "KYMA_CATALOG_URL": catalog_url,
        "KYMA_OBJECT_STORE": s3_store.url,
        "KYMA_S3_ENDPOINT_URL": s3_store._client.meta.endpoint_url,
        "KYMA_S3_ACCESS_KEY_ID": "testing",
        "KYMA_S3_SECRET_ACCESS_KEY": "testing",
    }
    a = Serve(tmp_path / "a", **env)
    b = Serve(tmp_path / "b", **env)
    try:
        a.sql("CREATE TABLE events (host string, n long)")
        first = _ingest(b, "events", [{"host": "b", "n": 1}, {"host": "b", "n": 2}], "batch-1")
        again = _ingest(a, "events", [{"host": "b", "n": 1}, {"host": "b", "n": 2}], "batch-1")
        assert not first["replayed"] and again["replayed"]
        assert again["snapshot_id"] == first["snapshot_id"]
        _ingest(a, "events", [{"host": "a", "n": 10}], "batch-2")
        sql = "SELECT host, sum(n) AS s FROM events GROUP BY host ORDER BY host"
        assert a.sql(sql)["rows"] == b.sql(sql)["rows"] == [["a", 10], ["b", 3]]
        b.sql("CREATE TABLE made_on_b (x long)")
        assert a.sql("SELECT count(*) FROM made_on_b")["rows"] == [[0]]
        # A's kept plans and tables (by shape, by the table's row version) see B's commits
        # and B's new column at A's next statement.
        point = "SELECT sum(n) AS s FROM events WHERE host = '{}'"
        assert a.sql(point.format("a"))["rows"] == [[10]]
        assert a.sql(point.format("b"))["stats"]["plan"] == "shape"
        _ingest(b, "events", [{"host": "a", "n": 5}], "batch-3")
        assert a.sql(point.format("a"))["rows"] == [[15]]
        b.sql("ALTER TABLE made_on_b ADD COLUMN y string")  # no commit: the row moves alone
        assert [c["name"] for c in a.sql("SELECT * FROM made_on_b")["columns"]][-2:] == ["x", "y"]
        b.sql("ALTER TABLE events ADD COLUMN extra string")
        _ingest(b, "events", [{"host": "c", "n": 1, "extra": "x"}], "batch-4")
        assert a.sql("SELECT extra FROM events WHERE host = 'c'")["rows"] == [["x"]]
        assert a.sql(point.format("c"))["rows"] == [[1]]
    finally:
        assert a.stop() == 0, "".join(a.output)
        assert b.stop() == 0, "".join(b.output)
