"""Arrow batches through the write path: one snapshot however many, conformed by name."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pytest

from kyma.engine.errors import IdempotencyKeyReusedError, SchemaError


def rows(services, sql: str) -> list[dict]:
    return services.query.execute(sql).table.to_pylist()


def test_many_batches_commit_as_one_snapshot(services) -> None:
    services.query.execute("CREATE TABLE t (n long, s string)")
    batches = (pa.record_batch({"n": pa.array(range(i, i + 3), pa.int32())}) for i in (0, 3))
    ack = services.write_path.ingest_batches("t", batches, source="test")
    assert (ack.rows, ack.snapshot_id) == (6, services.catalog.get_table("t").current_snapshot_id)
    assert rows(services, "SELECT sum(n) AS n, count(s) AS s, count(_timestamp) AS ts FROM t") == [
        {"n": 15, "s": 0, "ts": 6}
    ]


def test_a_failure_mid_stream_commits_nothing_and_leaves_no_objects(services) -> None:
    services.query.execute("CREATE TABLE t (n long)")

    def batches():  # type: ignore[no-untyped-def]
        yield pa.record_batch({"n": [1, 2]})
        yield pa.record_batch({"colour": ["red"]})

    with pytest.raises(SchemaError, match="column 'colour' is not in table 't'"):
        services.write_path.ingest_batches("t", batches(), source="test")
    assert rows(services, "SELECT count(*) AS n FROM t") == [{"n": 0}]
    assert list(services.store.list("tables/")) == []


def test_a_value_that_does_not_cast_names_the_column(services) -> None:
    services.query.execute("CREATE TABLE t (n int)")
    with pytest.raises(SchemaError, match="column 'n': cannot store string as int32"):
        services.write_path.ingest_batches("t", [pa.record_batch({"n": ["seven"]})], source="test")


def test_a_key_applies_once_and_refuses_other_content(services) -> None:
    services.query.execute("CREATE TABLE t (n long)")
    batch = pa.record_batch({"n": [1, 2, 3]})
    digest = hashlib.sha256(b"file").hexdigest()
    first = services.write_path.ingest_batches(
        "t", [batch], idempotency_key="k", content_hash=digest, source="test"
    )
    again = services.write_path.ingest_batches(
        "t", [batch], idempotency_key="k", content_hash=digest, source="test"
    )
    assert (again.replayed, again.snapshot_id) == (True, first.snapshot_id)
    assert rows(services, "SELECT count(*) AS n FROM t") == [{"n": 3}]
    with pytest.raises(IdempotencyKeyReusedError):
        services.write_path.ingest_batches(
            "t", [batch], idempotency_key="k", content_hash="other", source="test"
        )
