"""A Kafka source's status: per partition, the committed position, high watermark and lag."""

from __future__ import annotations

import logging
from typing import Any

from kyma.ingest.kafka._client_log import client_logger
from kyma.ingest.kafka._spec import KafkaSpec
from kyma.ingest.kafka._worker import KafkaWorker
from kyma.ingest.kafka.positions import PositionStore

log = logging.getLogger("kyma.kafka")


def source_status(
    spec: KafkaSpec, positions: PositionStore, worker: KafkaWorker | None
) -> dict[str, Any]:
    """Positions are the catalog's (exactly once) or the group's in Kafka (at least once)."""
    if spec.exactly_once:
        partitions: list[dict[str, Any]] = [
            {"topic": p.stream, "partition": p.partition, "position": p.position, "epoch": p.epoch}
            for p in positions.positions(spec.name)
        ]
    else:
        partitions = _group_offsets(spec)
    highs = _high_watermarks(spec, [(p["topic"], p["partition"]) for p in partitions])
    for p in partitions:
        high = highs.get((p["topic"], p["partition"]))
        p["high_watermark"] = high
        p["lag"] = None if high is None else max(0, high - p["position"])
    return {
        "delivery": spec.delivery,
        "committed_batches": worker.committed_batches if worker else 0,
        "partitions": partitions,
    }


def _group_offsets(spec: KafkaSpec) -> list[dict[str, Any]]:
    """The consumer group's committed offsets in Kafka, for every partition of the topics."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap_servers,
            "group.id": spec.group_id,
            **spec.client,
            "logger": client_logger(spec.name),
        }
    )
    try:
        wanted = []
        for topic in spec.topics:
            metadata = consumer.list_topics(topic, timeout=5).topics.get(topic)
            if metadata is not None and metadata.error is None:
                wanted += [TopicPartition(topic, p) for p in sorted(metadata.partitions)]
        committed = consumer.committed(wanted, timeout=5) if wanted else []
    except KafkaException as e:
        log.warning("source %r: group offsets unavailable: %s", spec.name, e)
        return []
    finally:
        consumer.close()
    return [
        {"topic": tp.topic, "partition": tp.partition, "position": max(tp.offset, 0)}
        for tp in committed
    ]


def _high_watermarks(
    spec: KafkaSpec, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    if not partitions:
        return {}
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap_servers,
            "group.id": f"{spec.group_id}-status",
            **spec.client,
            "logger": client_logger(spec.name),
        }
    )
    try:
        highs = {}
        for topic, partition in partitions:
            try:
                _, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=5
                )
                highs[(topic, partition)] = high
            except KafkaException:
                continue
        return highs
    finally:
        consumer.close()
