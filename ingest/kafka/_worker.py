"""One Kafka source's consumer loop, exactly-once.

Where reading starts is the catalog's business, not Kafka's: on every assignment the worker
claims the partitions (their epochs go up) and seeks to the catalog's positions. Each batch
commits its rows and the partitions' new positions in one catalog transaction; a worker
that lost a partition meanwhile is fenced and its batch rolls back. Offsets are committed
back to Kafka afterwards, for lag tooling only.

The worker takes every partition itself (``assignment: direct``, see ``_assign``), so a
restart reads again at once; ``assignment: group`` subscribes instead and lets the consumer
group split the partitions between workers.

With ``delivery: at_least_once`` the catalog keeps no positions: reading starts at the
group's offsets in Kafka, committed after each batch, so a crash between the two commits
reads that batch again. It is there for operators who move offsets with Kafka's own tools,
and as the control that shows the kill tests can see a duplicate.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import Catalog, Payload
from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import FencedWriterError, IngestError, NotFoundError, RetryableError
from kyma.engine.types import Column, KymaType
from kyma.ingest.kafka._assign import DirectAssignment
from kyma.ingest.kafka._batch import Origins, build_body
from kyma.ingest.kafka._spec import KafkaSpec
from kyma.ingest.kafka.positions import PositionStore
from kyma.ingest.kafka.positions import advance as advance_positions
from kyma.ingest.source import SourceWorker
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.kafka")

POLL_SECONDS = 0.2
RETRY_SECONDS = 1.0
METADATA_TYPES = (
    ("_kafka_topic", "string"),
    ("_kafka_partition", "int"),
    ("_kafka_offset", "long"),
)
DEAD_LETTER_COLUMNS = (
    Column("topic", KymaType("string")),
    Column("partition", KymaType("int")),
    Column("offset", KymaType("long")),
    Column("raw_base64", KymaType("string")),
    Column("error", KymaType("string")),
)


def dead_letter_table(spec: KafkaSpec) -> str:
    return f"{spec.table}_dead_letters"


class KafkaWorker(SourceWorker):
    """Consumes ``spec``'s topics into its table until ``stop`` is set."""

    def __init__(
        self, spec: KafkaSpec, catalog: Catalog, positions: PositionStore, write_path: WritePath
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        self.positions = positions
        self.write_path = write_path
        self.epochs: dict[tuple[str, int], int] = {}
        self.last_error: str | None = None
        self.degraded: str | None = None  # why the broker is unusable now; None once it serves
        self.committed_batches = 0
        self.watermarks: dict[tuple[str, int], int] = {}
        self._pending: list[Any] = []
        self._lock = threading.Lock()

    def run(self, stop: threading.Event) -> None:
        from confluent_kafka import Consumer

        prepare_table(self.spec, self.catalog)
        consumer = Consumer(
            {
                "bootstrap.servers": self.spec.bootstrap_servers,
                "group.id": self.spec.group_id,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                **self.spec.client,
                "error_cb": self._client_error,
            }
        )
        direct = None
        if self.spec.direct:
            direct = DirectAssignment(self.spec.topics)
        else:
            consumer.subscribe(
                list(self.spec.topics), on_assign=self._assigned, on_revoke=self._revoked
            )
        try:
            while not stop.is_set():
                if direct is not None:
                    self._take_new(consumer, direct)
                batch = self._collect(consumer, stop)
                if batch:
                    self._commit_batch(consumer, batch, stop, direct)
        finally:
            consumer.close()

    def _client_error(self, error: Any) -> None:
        """librdkafka's client-wide errors. Every broker down, a name that does not resolve,
        failed authentication or TLS, or a fatal error degrade the source until a partition
        is assigned or looked up, or a message arrives; one dropped connection does not."""
        from confluent_kafka import KafkaError

        degrading = {
            KafkaError._ALL_BROKERS_DOWN,
            KafkaError._RESOLVE,
            KafkaError._AUTHENTICATION,
            KafkaError._SSL,
        }
        self.last_error = f"Kafka {self.spec.bootstrap_servers}: {error.str()}"
        if error.fatal() or error.code() in degrading:
            self.degraded = self.last_error
            log.warning("source %r degraded: %s", self.spec.name, self.degraded)

    # ---------------------------------------------------------------- assignment

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        self.degraded = None
        if self.spec.exactly_once:
            self._claim(partitions)
        consumer.assign(partitions)
        log.info("source %r: assigned %s", self.spec.name, _names(partitions))

    def _take_new(self, consumer: Any, direct: DirectAssignment) -> None:
        """Claim and read the partitions of the topics not taken yet (direct assignment)."""
        from confluent_kafka import OFFSET_STORED, KafkaException

        try:
            fresh = direct.new_partitions(consumer)
            if fresh is None:
                return
            self.degraded = None  # the broker answered
            for topic in direct.missing:
                self.last_error = f"Kafka {self.spec.bootstrap_servers}: no topic {topic!r} (yet)"
            if not fresh:
                return
            if self.spec.exactly_once:
                self._claim(fresh)
            else:  # the group's committed offsets, else auto.offset.reset
                for tp in fresh:
                    tp.offset = OFFSET_STORED
            consumer.incremental_assign(fresh)
        except KafkaException as e:  # the broker did not answer: error_cb says why
            self.last_error = f"Kafka {self.spec.bootstrap_servers}: {e.args[0].str()}"
            return
        except RetryableError as e:  # the catalog: the lookup comes round again
            self.last_error = str(e)
            log.warning("source %r: partitions not claimed: %s", self.spec.name, e)
            return
        direct.took(fresh)
        log.info("source %r: assigned %s", self.spec.name, _names(fresh))

    def _let_go(self, consumer: Any, direct: DirectAssignment) -> None:
        """After a fenced batch: give up the partitions a newer worker claimed; the others
        are taken again at once, from the catalog's positions (the batch was dropped)."""
        from confluent_kafka import TopicPartition

        try:
            rows = self.positions.positions(self.spec.name)
        except RetryableError:
            rows = None  # then take them all again: a newer owner is fenced in turn, once
        now = {(p.stream, p.partition): p.epoch for p in rows or ()}
        with self._lock:
            mine, self.epochs = self.epochs, {}
        lost = [k for k, epoch in mine.items() if rows is not None and now.get(k) != epoch]
        if mine:
            consumer.incremental_unassign([TopicPartition(*key) for key in mine])
        direct.release(lost, again=[k for k in mine if k not in lost])
        if lost:
            log.warning(
                "source %r: %s taken over by a newer worker; not reading them any more",
                self.spec.name,
                ", ".join(f"{t}[{p}]" for t, p in lost),
            )

    def _claim(self, partitions: list[Any]) -> None:
        """Take the partitions over in the catalog and start them at its positions."""
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        with self._lock:
            for topic, numbers in by_topic.items():
                claims = self.positions.claim(self.spec.name, topic, numbers)
                for tp in partitions:
                    if tp.topic == topic:
                        claim = claims[tp.partition]
                        tp.offset = claim.position
                        self.epochs[(topic, tp.partition)] = claim.epoch

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        with self._lock:
            for tp in partitions:
                self.epochs.pop((tp.topic, tp.partition), None)
            self._pending.clear()  # the new owner reads them from the catalog's positions
        consumer.unassign()

    # ---------------------------------------------------------------- batches

    def _collect(self, consumer: Any, stop: threading.Event) -> list[Any]:
        """Messages until ``max_rows``, or ``max_latency_ms`` after the first one arrived."""
        deadline = None
        while not stop.is_set() and len(self._pending) < self.spec.max_rows:
            timeout = POLL_SECONDS
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    break
            wanted = self.spec.max_rows - len(self._pending)
            for message in consumer.consume(wanted, timeout=timeout):
                if message.error() is None:
                    self._pending.append(message)
                    self.degraded = None
                else:
                    log.warning("source %r: %s", self.spec.name, message.error())
            if not self._pending:
                break  # nothing yet: the caller looks after the partitions, then polls again
            if deadline is None:
                deadline = time.monotonic() + self.spec.max_latency_ms / 1000
        batch, self._pending = self._pending, []
        return batch

    def _commit_batch(
        self,
        consumer: Any,
        batch: list[Any],
        stop: threading.Event,
        direct: DirectAssignment | None = None,
    ) -> None:
        origins = Origins.of(batch)
        positions = origins.next_positions()  # every message counts, dead letters included
        while not stop.is_set():
            try:
                self._ingest(batch, origins, positions)
            except FencedWriterError as e:  # the partitions moved on: drop, never write twice
                self.last_error = str(e)
                log.warning("source %r: batch dropped: %s", self.spec.name, e)
                if direct is not None:
                    self._let_go(consumer, direct)
                return
            except RetryableError as e:
                self.last_error = str(e)
                log.warning("source %r: retrying a batch: %s", self.spec.name, e)
                stop.wait(RETRY_SECONDS)
                continue
            self.committed_batches += 1
            crash_point("kafka.catalog_committed")
            self._commit_to_kafka(consumer, positions)
            return

    def _ingest(
        self, batch: list[Any], origins: Origins, positions: dict[tuple[str, int], int]
    ) -> None:
        """Write the batch and advance ``positions`` in one commit; bad messages dead-letter."""
        messages = list(batch)
        for _ in range(len(messages) + 1):
            body = build_body(messages, origins if self.spec.metadata_columns else None)
            payload = self._advance(positions) if self.spec.exactly_once else None
            if not body.ndjson:
                if payload is not None:
                    self.catalog.commit(self.spec.table, [], payload=payload)
                return
            try:
                self.write_path.ingest_ndjson(
                    self.spec.table,
                    body.ndjson,
                    schema_evolve=self.spec.schema_evolve,
                    source=f"kafka:{self.spec.name}",
                    columns=body.columns,
                    payload=payload,
                )
                return
            except IngestError as e:
                if e.line is None:
                    raise
                bad = body.owners[e.line - 1]
                self._dead_letter(messages[bad], e)
                keep = [i for i in range(len(messages)) if i != bad]
                messages = [messages[i] for i in keep]
                origins = origins.take(pa.array(keep, pa.int64()))

    def _advance(self, positions: dict[tuple[str, int], int]) -> Payload:
        with self._lock:
            epochs = dict(self.epochs)
        by_topic: dict[str, dict[int, tuple[int, int]]] = {}
        for (topic, partition), position in positions.items():
            epoch = epochs.get((topic, partition))
            if epoch is None:
                raise FencedWriterError(
                    f"source {self.spec.name!r}: {topic}[{partition}] was revoked"
                )
            by_topic.setdefault(topic, {})[partition] = (epoch, position)
        payloads = [advance_positions(self.spec.name, t, moves) for t, moves in by_topic.items()]

        def payload(cur: Any, snapshot_id: int) -> None:
            for each in payloads:
                each(cur, snapshot_id)

        return payload

    def _dead_letter(self, message: Any, error: IngestError) -> None:
        """Record the message beside the table; its key makes a replayed batch write it once."""
        table = dead_letter_table(self.spec)
        try:
            self.catalog.get_table(table)
        except NotFoundError:
            self.catalog.create_table(table, DEAD_LETTER_COLUMNS, if_not_exists=True)
        row = {
            "topic": message.topic(),
            "partition": message.partition(),
            "offset": message.offset(),
            "raw_base64": base64.b64encode(message.value() or b"").decode(),
            "error": str(error),
        }
        key = (
            f"kafka-dlq:{self.spec.name}:{message.topic()}:{message.partition()}:{message.offset()}"
        )
        self.write_path.ingest_ndjson(
            table, json.dumps(row).encode(), idempotency_key=key, source=f"kafka:{self.spec.name}"
        )
        log.warning("source %r: dead-lettered %s", self.spec.name, key)

    def _commit_to_kafka(self, consumer: Any, positions: dict[tuple[str, int], int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        offsets = [TopicPartition(t, p, o) for (t, p), o in positions.items()]
        try:
            # At least once, these offsets are where the next reader starts: wait for them.
            consumer.commit(offsets=offsets, asynchronous=self.spec.exactly_once)
        except KafkaException as e:  # exactly once, the catalog's positions are the truth
            self.last_error = f"offsets not committed to Kafka: {e}"
            log.warning("source %r: %s", self.spec.name, self.last_error)


def prepare_table(spec: KafkaSpec, catalog: Catalog) -> None:
    """Create the source's table, or widen it with the ``_kafka_*`` columns it lacks."""
    wanted = [Column(n, KymaType(t)) for n, t in METADATA_TYPES] if spec.metadata_columns else []
    try:
        info = catalog.get_table(spec.table)
    except NotFoundError:
        catalog.create_table(spec.table, wanted, if_not_exists=True)
        return
    for column in wanted:
        if info.column(column.name) is None:
            catalog.add_column(spec.table, column, if_not_exists=True)


def _names(partitions: list[Any]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]@{tp.offset}" for tp in partitions) or "nothing"
