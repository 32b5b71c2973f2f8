"""Kafka ingest, exactly-once: source definitions and the consumer loop.

Needs the ``kafka`` extra (confluent-kafka); nothing imports it until a worker runs.
"""

from kyma.ingest.kafka._source import KafkaSource
from kyma.ingest.kafka._spec import KafkaSpec, is_client_setting, parse_kafka_spec
from kyma.ingest.kafka._status import source_status
from kyma.ingest.kafka._worker import KafkaWorker, dead_letter_table, prepare_table

__all__ = [
    "KafkaSource",
    "KafkaSpec",
    "KafkaWorker",
    "dead_letter_table",
    "is_client_setting",
    "parse_kafka_spec",
    "prepare_table",
    "source_status",
]
