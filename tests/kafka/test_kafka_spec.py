"""Kafka source definitions: every mistake is named by its field, in JSON and in SQL."""

from __future__ import annotations

import subprocess
import sys

import pytest
from http_helpers import sql

from kyma.engine.errors import ConfigError
from kyma.ingest.kafka import parse_kafka_spec

GOOD = {
    "name": "clicks_src",
    "type": "kafka",
    "table": "clicks",
    "kafka": {"bootstrap_servers": "127.0.0.1:9092", "topics": ["clicks"], "group_id": "g"},
}


def with_changes(**changes):  # type: ignore[no-untyped-def]
    body = {**GOOD, "kafka": dict(GOOD["kafka"])}
    for key, value in changes.items():
        if key.startswith("kafka__"):
            body["kafka"][key.removeprefix("kafka__").replace("__", ".")] = value
        else:
            body[key] = value
    return body


def test_defaults_are_filled_in() -> None:
    spec = parse_kafka_spec(GOOD)
    assert (spec.max_rows, spec.max_latency_ms) == (300_000, 1_000)
    assert (spec.max_bytes, spec.writers) == (64 << 20, 2)
    assert spec.exactly_once and spec.metadata_columns and not spec.schema_evolve
    assert spec.direct and spec.assignment == "direct"
    assert parse_kafka_spec(spec.to_json()) == spec


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (with_changes(name="Clicks"), "name: 'Clicks' is not a source name"),
        (with_changes(type="pulsar"), "type: expected 'kafka'"),
        (with_changes(kafka__topics=[]), "kafka.topics: expected a non-empty list"),
        (with_changes(kafka__group_id=""), "kafka.group_id: expected a non-empty string"),
        (with_changes(kafka__group__id="x"), "kafka.group.id: not a setting a source may set"),
        (with_changes(batch={"max_rows": 0}), "batch.max_rows: expected an integer from 1"),
        (with_changes(batch={"rows": 5}), "batch.rows: unknown field"),
        (with_changes(batch={"writers": 0}), "batch.writers: expected an integer from 1 to 16"),
        (with_changes(batch={"max_bytes": 10}), "batch.max_bytes: expected an integer from 1024"),
        (with_changes(delivery="maybe"), "delivery: expected 'exactly_once' or 'at_least_once'"),
        (with_changes(assignment="sticky"), "assignment: expected 'direct' or 'group'"),
        (with_changes(schema_evolve="yes"), "schema_evolve: expected true or false"),
        (with_changes(colour="red"), "colour: unknown field"),
    ],
)
def test_a_bad_definition_names_its_field(body, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=message):
        parse_kafka_spec(body)


def test_the_api_answers_400_and_stores_nothing(client) -> None:
    answer = client.post("/v1/sources", json=with_changes(delivery="maybe"))
    assert answer.status_code == 400
    assert "delivery" in answer.get_json()["message"]
    assert client.get("/v1/sources").get_json()["sources"] == []


def test_sql_spells_client_settings_with_underscores(client) -> None:
    sql(
        client,
        "CREATE SOURCE s TYPE kafka WITH (table = 't', bootstrap_servers = '127.0.0.1:9',"
        " topics = 'a, b', group_id = 'g', security_protocol = 'SASL_SSL',"
        " sasl_mechanism = 'PLAIN', delivery = 'at_least_once', assignment = 'group')",
    )
    source = client.get("/v1/sources/s").get_json()
    assert source["kafka"] == {
        "bootstrap_servers": "127.0.0.1:9",
        "topics": ["a", "b"],
        "group_id": "g",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
    }
    assert (source["delivery"], source["assignment"]) == ("at_least_once", "group")


def test_kafka_consume_refuses_an_unknown_source(catalog_url, tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kyma", "kafka-consume", "--source", "nope"],
        env={
            "PATH": "/usr/bin:/bin",
            "KYMA_HOME": str(tmp_path),
            "KYMA_CATALOG_URL": catalog_url,
            "KYMA_OBJECT_STORE": f"file://{tmp_path}/objects",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "no source named 'nope'" in done.stderr
