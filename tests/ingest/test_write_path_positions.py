"""The write path commits whole columns and a source-position payload with the rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from kyma.engine.errors import FencedWriterError, IngestError, SchemaError
from kyma.ingest.kafka.positions import advance as advance_positions

BODY = b'{"n": 1}\n{"n": 2}\n{"n": 3}\n'


@pytest.fixture
def clicks(services):  # type: ignore[no-untyped-def]
    services.query.execute(
        "CREATE TABLE clicks (n long, _kafka_topic string, _kafka_partition int,"
        " _kafka_offset long)"
    )
    return services


def test_columns_and_positions_land_with_the_rows(clicks) -> None:
    claim = clicks.stores.sources.positions.claim("src", "clicks", [2])[2]
    ack = clicks.write_path.ingest_ndjson(
        "clicks",
        BODY,
        schema_evolve=False,
        columns={
            "_kafka_topic": pa.array(["clicks"] * 3),
            "_kafka_partition": pa.array([2, 2, 2]),
            "_kafka_offset": pa.array([10, 11, 12]),
        },
        payload=advance_positions("src", "clicks", {2: (claim.epoch, 13)}),
    )
    assert ack.rows == 3
    rows = clicks.query.execute(
        "SELECT n, _kafka_topic, _kafka_partition, _kafka_offset FROM clicks ORDER BY n"
    ).table.to_pylist()
    assert [tuple(r.values()) for r in rows] == [
        (1, "clicks", 2, 10),
        (2, "clicks", 2, 11),
        (3, "clicks", 2, 12),
    ]
    assert [p.position for p in clicks.stores.sources.positions.positions("src")] == [13]


def test_a_fenced_payload_commits_nothing(clicks, tmp_path) -> None:
    stale = clicks.stores.sources.positions.claim("src", "clicks", [0])[0]
    clicks.stores.sources.positions.claim("src", "clicks", [0])
    with pytest.raises(FencedWriterError):
        clicks.write_path.ingest_ndjson(
            "clicks", BODY, payload=advance_positions("src", "clicks", {0: (stale.epoch, 3)})
        )
    assert clicks.query.execute("SELECT count(*) AS n FROM clicks").table.to_pylist() == [{"n": 0}]
    assert not list((tmp_path / "objects").rglob("*.tlm"))  # the written extent was removed


def test_bad_columns_are_refused(clicks) -> None:
    with pytest.raises(SchemaError, match="'nope' is not in the table"):
        clicks.write_path.ingest_ndjson("clicks", BODY, columns={"nope": pa.array([1, 2, 3])})
    with pytest.raises(IngestError, match="2 values for 3 rows"):
        clicks.write_path.ingest_ndjson("clicks", BODY, columns={"_kafka_offset": pa.array([1, 2])})
