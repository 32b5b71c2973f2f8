"""Kafka sources end to end: definitions, exactly-once rows, dead letters, fencing."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid

import pytest
from http_helpers import sql
from kafka_broker import GROUP_TIMINGS, KafkaBroker

from kyma.engine.errors import FencedWriterError
from kyma.ingest.kafka import KafkaWorker, parse_kafka_spec, prepare_table
from kyma.ingest.kafka._batch import read_round

WAIT = 60.0  # seconds: every wait for rows is bounded


def source_body(broker: KafkaBroker, topic: str, **extra) -> dict:  # type: ignore[no-untyped-def]
    return {
        "name": "clicks_src",
        "type": "kafka",
        "table": "clicks",
        "kafka": {
            "bootstrap_servers": broker.bootstrap,
            "topics": [topic],
            "group_id": f"g-{topic}",
            **{k: str(v) for k, v in GROUP_TIMINGS.items()},
        },
        "batch": {"max_rows": 200, "max_latency_ms": 100},
        **extra,
    }


def numbered(n: int, start: int = 0) -> list[bytes]:
    return [json.dumps({"n": i}).encode() for i in range(start, start + n)]


def wait_for_rows(client, table: str, rows: int) -> list:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        answer = sql(client, f"SELECT count(*), count(DISTINCT n) FROM {table}")["rows"]
        if answer[0][0] >= rows:
            return answer[0]
        time.sleep(0.2)
    raise AssertionError(f"{table} has {answer[0][0]} rows after {WAIT}s, expected {rows}")


@pytest.fixture
def topic(kafka_broker: KafkaBroker) -> str:
    name = f"clicks-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(name, partitions=3)
    return name


def test_a_source_ingests_every_message_once_with_its_origin(
    client, services, kafka_broker, topic
) -> None:
    sql(client, "CREATE TABLE clicks (n long)")
    services.sources.start()
    created = client.post("/v1/sources", json=source_body(kafka_broker, topic))
    assert created.status_code == 201, created.get_json()
    sent = kafka_broker.produce(topic, numbered(600), spread=3)
    assert wait_for_rows(client, "clicks", 600) == [600, 600]
    rows = sql(client, "SELECT _kafka_partition, _kafka_offset FROM clicks")["rows"]
    assert sorted(map(tuple, rows)) == sorted(sent)
    status = client.get("/v1/sources/clicks_src/status").get_json()
    assert status["state"] == "running"
    ends = {}
    for partition, offset in sent:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    assert {p["partition"]: p["position"] for p in status["partitions"]} == ends
    assert all(p["lag"] == 0 for p in status["partitions"])
    assert status["rows_total"] == 600 and status["last_commit_at"] <= time.time()
    deadline = time.monotonic() + WAIT  # the lag in the metrics: from the fetched watermarks
    while status["lag"] != 0 and time.monotonic() < deadline:
        time.sleep(0.1)
        status = client.get("/v1/sources/clicks_src/status").get_json()
    assert (status["lag"], status["lag_unit"]) == (0, "messages")
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'kyma_source_rows_total{source="clicks_src",type="kafka"} 600.0' in metrics
    assert 'kyma_source_lag{source="clicks_src",type="kafka",unit="messages"} 0.0' in metrics
    assert client.get("/v1/sources").get_json()["sources"][0]["name"] == "clicks_src"
    assert client.delete("/v1/sources/clicks_src").status_code == 204
    assert client.get("/v1/sources/clicks_src/status").status_code == 404


def test_a_topic_created_later_is_read_too(client, services, kafka_broker, topic) -> None:
    """Direct assignment looks the topics' partitions up again every few seconds."""
    later = f"later-{uuid.uuid4().hex[:8]}"
    sql(client, "CREATE TABLE clicks (n long)")
    services.sources.start()
    body = source_body(kafka_broker, topic)
    body["kafka"]["topics"] = [topic, later]
    assert client.post("/v1/sources", json=body).status_code == 201
    kafka_broker.produce(topic, numbered(30), spread=3)
    assert wait_for_rows(client, "clicks", 30) == [30, 30]
    status = client.get("/v1/sources/clicks_src/status").get_json()
    assert f"no topic {later!r} (yet)" in status["last_error"]
    kafka_broker.create_topic(later, partitions=2)
    kafka_broker.produce(later, numbered(30, 30), spread=2)
    assert wait_for_rows(client, "clicks", 60) == [60, 60]
    rows = sql(client, "SELECT _kafka_topic, count(*) FROM clicks GROUP BY 1 ORDER BY 1")
    assert sorted(map(tuple, rows["rows"])) == sorted([(topic, 30), (later, 30)])


def test_a_bad_message_goes_to_the_dead_letter_table(client, services, kafka_broker) -> None:
    name = f"dlq-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(name, partitions=1)
    sql(client, "CREATE TABLE clicks (n long)")
    services.sources.start()
    client.post("/v1/sources", json=source_body(kafka_broker, name))
    kafka_broker.produce(name, [*numbered(5), b'{"n": "five"}', b"not json", *numbered(5, 10)])
    assert wait_for_rows(client, "clicks", 10) == [10, 10]
    dead = sql(client, 'SELECT "offset", error FROM clicks_dead_letters ORDER BY "offset"')
    assert [row[0] for row in dead["rows"]] == [5, 6]
    assert "expected long" in dead["rows"][0][1]
    status = client.get("/v1/sources/clicks_src/status").get_json()
    assert status["partitions"][0]["position"] == 12  # dead letters count as read


def test_sources_in_sql(client, kafka_broker, topic) -> None:
    statement = (
        f"CREATE SOURCE clicks_src TYPE kafka WITH (table = 'clicks', bootstrap_servers ="
        f" '{kafka_broker.bootstrap}', topics = '{topic}', group_id = 'g', max_rows = 10)"
    )
    assert sql(client, statement)["status"] == "CREATE SOURCE"
    assert sql(client, "SHOW SOURCES")["rows"] == [["clicks_src", "kafka", "clicks", False]]
    columns = [r[0] for r in sql(client, "DESCRIBE clicks")["rows"]]
    assert {"_kafka_topic", "_kafka_partition", "_kafka_offset"} <= set(columns)
    bad = sql(client, "CREATE SOURCE x TYPE kafka WITH (colour = 'red')", 400)
    assert "unknown source option 'colour'" in bad["message"]
    assert sql(client, "DROP SOURCE clicks_src")["status"] == "DROP SOURCE"
    assert sql(client, "DROP SOURCE IF EXISTS clicks_src")["status"] == "DROP SOURCE"
    assert sql(client, "SHOW SOURCES")["rows"] == []


def test_a_zombie_worker_cannot_commit(services, kafka_broker) -> None:
    """A worker whose partition was claimed by another loses its batch; nothing is written."""
    name = f"zombie-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(name, partitions=1)
    spec = parse_kafka_spec(source_body(kafka_broker, name))
    services.query.execute("CREATE TABLE clicks (n long)")
    zombie = KafkaWorker(
        spec, services.catalog, services.stores.sources.positions, services.write_path
    )
    stop = threading.Event()
    thread = threading.Thread(target=zombie.run, args=(stop,))
    thread.start()
    try:
        kafka_broker.produce(name, numbered(3))
        deadline = time.monotonic() + WAIT
        while zombie.committed_batches == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert zombie.committed_batches == 1
        services.stores.sources.positions.claim(spec.name, name, [0])  # a rebalance moved it
        kafka_broker.produce(name, numbered(3, 3))
        deadline = time.monotonic() + WAIT
        while zombie.last_error is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert "was superseded" in (zombie.last_error or "")
    count = services.query.execute("SELECT count(*) AS n FROM clicks").table.to_pylist()
    assert count == [{"n": 3}]
    assert [p.position for p in services.stores.sources.positions.positions(spec.name)] == [3]


def test_fencing_is_in_the_commit_itself(services, kafka_broker) -> None:
    """The catalog refuses the stale epoch even when the worker does not know it lost."""
    name = f"fence-{uuid.uuid4().hex[:8]}"
    spec = parse_kafka_spec(source_body(kafka_broker, name))
    services.query.execute("CREATE TABLE clicks (n long)")
    prepare_table(spec, services.catalog)
    worker = KafkaWorker(
        spec, services.catalog, services.stores.sources.positions, services.write_path
    )
    claim = services.stores.sources.positions.claim(spec.name, name, [0])[0]
    worker.epochs[(name, 0)] = claim.epoch
    services.stores.sources.positions.claim(spec.name, name, [0])

    class Message:  # the three accessors the batch reads, as confluent_kafka's Message has
        def __init__(self, offset: int) -> None:
            self._offset = offset

        def value(self) -> bytes:
            return b'{"n": 1}'

        def topic(self) -> str:
            return name

        def partition(self) -> int:
            return 0

        def offset(self) -> int:
            return self._offset

    polled = worker._polled(*read_round([Message(0)], spec.metadata_columns))
    with pytest.raises(FencedWriterError, match="superseded"):
        worker._ingest(polled, lambda: True, threading.Event())
    assert services.query.execute("SELECT count(*) AS n FROM clicks").table.to_pylist() == [
        {"n": 0}
    ]


def test_a_broker_restart_loses_and_duplicates_nothing(services, durable_kafka_broker) -> None:
    broker = durable_kafka_broker
    name = f"restart-{uuid.uuid4().hex[:8]}"
    broker.create_topic(name, partitions=3)
    services.query.execute("CREATE TABLE clicks (n long)")
    services.sources.start()
    services.sources.create(source_body(broker, name))

    def counts() -> list:  # type: ignore[no-untyped-def]
        answer = services.query.execute(
            "SELECT count(*) AS rows, count(DISTINCT n) AS numbers,"
            " (SELECT count(*) FROM (SELECT DISTINCT _kafka_partition, _kafka_offset"
            " FROM clicks)) AS origins FROM clicks"
        )
        return list(answer.table.to_pylist()[0].values())

    def wait_for(rows: int) -> list:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + WAIT
        while counts()[0] < rows and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)  # a duplicate committed late would show now
        return counts()

    broker.produce(name, numbered(300), spread=3)
    assert wait_for(300) == [300, 300, 300]
    broker.restart()
    broker.produce(name, numbered(300, 300), spread=3)
    assert wait_for(600) == [600, 600, 600]
    status = services.sources.status("clicks_src")
    assert status["state"] == "running"
    assert [p["lag"] for p in status["partitions"]] == [0, 0, 0]


@pytest.mark.parametrize("evolve", [False, True])
def test_unknown_fields_are_dropped_unless_the_source_evolves(
    client, services, kafka_broker, evolve
) -> None:
    name = f"evolve-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(name, partitions=1)
    sql(client, "CREATE TABLE clicks (n long)")
    services.sources.start()
    client.post("/v1/sources", json=source_body(kafka_broker, name, schema_evolve=evolve))
    kafka_broker.produce(name, [b'{"n": 1, "colour": "red"}\n{"n": 2}'])  # NDJSON: two rows
    assert wait_for_rows(client, "clicks", 2) == [2, 2]
    columns = [r[0] for r in sql(client, "DESCRIBE clicks")["rows"]]
    assert ("colour" in columns) is evolve
    if evolve:
        rows = sql(client, "SELECT n, colour, _kafka_offset FROM clicks ORDER BY n")["rows"]
        assert rows == [[1, "red", 0], [2, None, 0]]


def test_a_source_on_a_dead_broker_is_degraded_with_the_cause(client, services, caplog) -> None:
    """Nothing listens on the port: the status says degraded and why, not running; the
    client's reconnect attempts reach kyma's log once per kind, not dozens a second."""
    caplog.set_level(logging.DEBUG, logger="kyma.kafka.client")
    with socket.socket() as probe:  # a port that was free a moment ago, nothing listening
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    sql(client, "CREATE TABLE clicks (n long)")
    services.sources.start()
    body = {
        "name": "dead_src",
        "type": "kafka",
        "table": "clicks",
        "kafka": {"bootstrap_servers": dead, "topics": ["clicks"], "group_id": "g"},
    }
    created = client.post("/v1/sources", json=body)
    assert created.status_code == 201, created.get_json()
    deadline = time.monotonic() + 20
    status = client.get("/v1/sources/dead_src/status").get_json()
    while status["state"] != "degraded" and time.monotonic() < deadline:
        time.sleep(0.1)
        status = client.get("/v1/sources/dead_src/status").get_json()
    assert status["state"] == "degraded", status
    assert dead in status["degraded_reason"] and "brokers are down" in status["degraded_reason"]
    assert dead in status["last_error"]  # the latest error: the same, or a refused connection
    assert status["degraded_since"] <= time.time()
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'kyma_source_degraded{source="dead_src",type="kafka"} 1.0' in metrics
    assert 'kyma_source_degraded_since_timestamp_seconds{source="dead_src"' in metrics
    assert f'kyma_source_last_error_info{{error="Kafka {dead}' in metrics
    time.sleep(2.0)  # librdkafka retries the connection every 100 ms to 1 s meanwhile
    client_lines = [r for r in caplog.records if r.name == "kyma.kafka.client.dead_src"]
    assert client_lines and any(dead in r.getMessage() for r in client_lines)
    kinds = [(r.levelno, r.args[0]) for r in client_lines]  # type: ignore[index]
    assert len(kinds) == len(set(kinds)), kinds
    assert client.delete("/v1/sources/dead_src").status_code == 204
