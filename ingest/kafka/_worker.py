"""One Kafka source's consumer loop, exactly-once.

Where reading starts is the catalog's business, not Kafka's: on every assignment the worker
claims the partitions (their epochs go up) and seeks to the catalog's positions. Each batch
commits its rows and the partitions' new positions in one catalog transaction; a worker
that lost a partition meanwhile is fenced and its batch rolls back. Offsets are committed
back to Kafka afterwards, for lag tooling only.

The worker takes every partition itself (``assignment: direct``, see ``_assign``), so a
restart reads again at once; ``assignment: group`` subscribes instead and lets the consumer
group split the partitions between workers.

Polling overlaps writing: the polling thread hands each round, with the epochs its
partitions were read under, to ``writers`` committing threads (``_lanes``) and polls the
next one meanwhile. A round goes once it holds ``max_rows / EARLY`` messages and a
committing thread is free (so writing starts at once, and rounds grow only while every
thread is busy), or at ``max_rows``, ``max_bytes`` or ``max_latency_ms``. Rounds are
coerced and written side by side, and committed in the order polled: most of a batch's
time is coercion (which lets go of the GIL) and waiting (the extents' fsyncs, the
catalog's commit), so two at once keep both cores busy.
A batch whose commit is fenced is dropped with the batches polled before the polling thread
let its partitions go, and those are read again from the catalog's positions once no older
batch is being written, so no batch is ever written past one that was dropped.

With ``delivery: at_least_once`` the catalog keeps no positions: reading starts at the
group's offsets in Kafka, committed after each batch, so a crash between the two commits
reads that batch again. It is there for operators who move offsets with Kafka's own tools,
and as the control that shows the kill tests can see a duplicate.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import logging
import queue
import threading
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

from kyma.engine.catalog import Catalog, Payload
from kyma.engine.crashpoints import crash_point
from kyma.engine.errors import FencedWriterError, IngestError, NotFoundError, RetryableError
from kyma.engine.types import Column, KymaType
from kyma.ingest.kafka._assign import DirectAssignment
from kyma.ingest.kafka._batch import Body, Origins, RoundReader
from kyma.ingest.kafka._client_log import client_logger
from kyma.ingest.kafka._lanes import Lanes, Turn
from kyma.ingest.kafka._spec import KafkaSpec
from kyma.ingest.kafka.positions import PositionStore
from kyma.ingest.kafka.positions import advance as advance_positions
from kyma.ingest.source import SourceWorker
from kyma.ingest.write_path import WritePath

log = logging.getLogger("kyma.kafka")

POLL_SECONDS = 0.2
READY_SECONDS = 0.02  # ... once a round could go: how soon a freed committing thread gets it
CHUNK = 10_000  # messages a consume call asks for at most: the rounds' limits are checked between
RETRY_SECONDS = 1.0
QUEUE_BATCHES = 1  # batches polled ahead, per committing thread, besides one more
EARLY = 8  # a round of max_rows / EARLY goes as soon as a committing thread is free
LAG_SECONDS = 1.0  # how often the lag is worked out
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

    lag_unit = "messages"

    def __init__(
        self, spec: KafkaSpec, catalog: Catalog, positions: PositionStore, write_path: WritePath
    ) -> None:
        self.spec = spec
        self.catalog = catalog
        self.positions = positions
        self.write_path = write_path
        self.epochs: dict[tuple[str, int], int] = {}
        # last_error, and degraded: why the broker is unusable now; None once it serves
        self.committed_batches = 0
        self.watermarks: dict[tuple[str, int], int] = {}
        self._reading = RoundReader(spec.metadata_columns)  # the round being polled
        self._backlog = False  # the last consume call returned all it asked for
        self._lock = threading.Lock()
        # Polling runs ahead of writing: the polling thread hands batches, with the
        # epochs they were read under, to the committing threads (set up by ``run``).
        self._lanes: Lanes[_Polled] | None = None
        self._fences = 0  # fenced batches the committing threads reported
        self._fences_handled = 0  # ... and the polling thread has acted on
        # Positions committed to the catalog, for the polling thread to commit to Kafka:
        # the client serializes its calls, so a commit would wait for a poll to return.
        self._committed: queue.SimpleQueue[dict[tuple[str, int], int]] = queue.SimpleQueue()
        self._read_to: dict[tuple[str, int], int] = {}  # committed positions, for the lag
        self._lag_due = 0.0

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
                "logger": client_logger(self.spec.name),
            }
        )
        direct = None
        if self.spec.direct:
            direct = DirectAssignment(self.spec.topics)
        else:
            consumer.subscribe(
                list(self.spec.topics), on_assign=self._assigned, on_revoke=self._revoked
            )
        done = threading.Event()  # set once the polling thread stops, for any reason
        lanes = self._lanes = Lanes(
            self._writers,
            QUEUE_BATCHES * self._writers + 1,
            lambda polled, turn: self._write(polled, turn, done),
            f"source-{self.spec.name}-commit",
        )
        try:
            while not stop.is_set() and lanes.alive:
                if self._fences_handled < self._fences:
                    self._after_fence(consumer, direct, stop)
                if direct is not None:
                    self._take_new(consumer, direct)
                reading = self._collect(consumer, stop)
                if reading.rows:
                    self._hand_off(reading, stop)
                self._commit_to_kafka(consumer)
                self._update_lag(consumer)
        finally:
            done.set()
            lanes.close()
            self._commit_to_kafka(consumer)
            consumer.close()
        if lanes.failure is not None:
            raise lanes.failure

    @property
    def _writers(self) -> int:
        """Committing threads. At least once, one: Kafka's offsets are committed after the
        catalog's, by the polling thread, and batches written at once would widen the gap
        a crash re-reads."""
        return self.spec.writers if self.spec.exactly_once else 1

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
        message = f"Kafka {self.spec.bootstrap_servers}: {error.str()}"
        self.last_error = message
        if error.fatal() or error.code() in degrading:
            self.metrics.degrade(message)
            log.warning("source %r degraded: %s", self.spec.name, message)

    # ---------------------------------------------------------------- assignment

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        self.metrics.degrade(None)
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
            self.metrics.degrade(None)  # the broker answered
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
        for key in lost:
            self._read_to.pop(key, None)
        if lost:
            log.warning(
                "source %r: %s taken over by a newer worker; not reading them any more",
                self.spec.name,
                ", ".join(f"{t}[{p}]" for t, p in lost),
            )

    def _seek_back(self, consumer: Any) -> bool:
        """After a fenced batch (group assignment): stop writing the partitions a newer
        worker claimed (the group moves them on its next rebalance) and read the others
        again from the catalog's positions."""
        from confluent_kafka import KafkaException, TopicPartition

        try:
            rows = {(p.stream, p.partition): p for p in self.positions.positions(self.spec.name)}
        except RetryableError as e:
            self.last_error = str(e)
            return False
        with self._lock:
            mine = dict(self.epochs)
            for key, epoch in mine.items():
                row = rows.get(key)
                if row is None or row.epoch != epoch:
                    self.epochs.pop(key)
                    continue
                try:
                    consumer.seek(TopicPartition(key[0], key[1], row.position))
                except KafkaException as e:  # not fetching yet: it starts at the claim's
                    log.info("source %r: no seek of %s[%d]: %s", self.spec.name, *key, e)
        return True

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
                        self._read_to[(topic, tp.partition)] = claim.position

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        with self._lock:
            for tp in partitions:
                self.epochs.pop((tp.topic, tp.partition), None)
                self._read_to.pop((tp.topic, tp.partition), None)
            self._reading = RoundReader(self.spec.metadata_columns)  # the new owner reads
            # them from the catalog's positions
        consumer.unassign()

    # ---------------------------------------------------------------- batches

    def _collect(self, consumer: Any, stop: threading.Event) -> RoundReader:
        """Messages until ``max_rows`` or ``max_bytes``, or ``max_latency_ms`` after the first
        one arrived, or -- once there are ``max_rows / EARLY`` -- as soon as a committing
        thread is free (so writing starts at once, and rounds grow only while every thread
        is busy). Each ``consume`` call's messages are read at once (``RoundReader``)."""
        deadline = None
        while not stop.is_set():
            rows = self._reading.rows
            if rows >= self.spec.max_rows or self._reading.size >= self.spec.max_bytes:
                break
            lanes = self._lanes
            ready = rows * EARLY >= self.spec.max_rows
            if ready and lanes is not None and lanes.free:
                break
            timeout = READY_SECONDS if ready else POLL_SECONDS
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    break
            wanted = min(CHUNK, self.spec.max_rows - rows)
            with _collector_paused(self._backlog):
                self._backlog = self._read(consumer.consume(wanted, timeout)) == wanted
            if self._reading.rows > rows and self.degraded is not None:
                self.metrics.degrade(None)  # messages arrive: the broker serves
            if not self._reading.rows:
                break  # nothing yet: the caller looks after the partitions, then polls again
            if deadline is None:
                deadline = time.monotonic() + self.spec.max_latency_ms / 1000
        reading, self._reading = self._reading, RoundReader(self.spec.metadata_columns)
        return reading

    def _read(self, polled: list[Any]) -> int:
        """Add one ``consume`` call's messages to the round (log and skip the errors); how
        many the call returned."""
        count = len(polled)
        if polled and any(map(type(polled[0]).error, polled)):  # a C loop
            for message in polled:
                if message.error() is not None:
                    log.warning("source %r: %s", self.spec.name, message.error())
            polled = [m for m in polled if m.error() is None]
        self._reading.add(polled)
        return count

    def _hand_off(self, reading: RoundReader, stop: threading.Event) -> None:
        """Queue a polled round for the committing threads, blocking while enough batches
        wait; a round of twice ``max_rows / EARLY`` or more (polled while every thread was
        busy) as one batch per thread, so that they write it side by side."""
        big = reading.rows * EARLY >= 2 * self.spec.max_rows
        for body, origins in reading.finish(self._writers if big else 1):
            if self._lanes is None or not self._lanes.put(self._polled(body, origins), stop):
                return

    def _polled(self, body: Body, origins: Origins) -> _Polled:
        """A batch, with the fences acted on and the epochs it was read under."""
        positions = origins.next_positions()  # every message counts, dead letters too
        with self._lock:
            return _Polled(body, origins, self._fences_handled, dict(self.epochs), positions)

    def _after_fence(
        self, consumer: Any, direct: DirectAssignment | None, stop: threading.Event
    ) -> None:
        """A batch was fenced: give up the partitions a newer worker claimed and read the
        others again from the catalog's positions, once no batch polled before is being
        written (those waiting are dropped: they continue where the dropped one ended)."""
        fences = self._fences
        if self._lanes is None or not self._lanes.idle(stop):
            return  # stopping: the next run reads from the catalog's positions anyway
        self._reading = RoundReader(self.spec.metadata_columns)
        if direct is not None:
            self._let_go(consumer, direct)
        elif not self._seek_back(consumer):
            return  # the catalog is away: again on the next round, dropping what was polled
        self._fences_handled = fences

    def _write(self, polled: _Polled, turn: Turn, done: threading.Event) -> None:
        """A committing thread: write a batch, unless polled before a fence was acted on."""
        if not self._dropped(polled, done) and not self._commit_batch(polled, turn, done):
            with self._lock:
                self._fences += 1

    def _dropped(self, polled: _Polled, done: threading.Event) -> bool:
        """Whether ``polled`` must not be written: stopping, or polled before a fence was
        acted on (the next reader starts from the catalog's positions)."""
        return done.is_set() or polled.fences_handled < self._fences

    def _commit_batch(self, polled: _Polled, turn: Turn, done: threading.Event) -> bool:
        """Write a batch and advance its positions; False when it was fenced and dropped."""
        while not done.is_set():
            try:
                rows = self._ingest(polled, turn, done)
            except FencedWriterError as e:  # the partitions moved on: drop, never write twice
                self.last_error = str(e)
                log.warning("source %r: batch dropped: %s", self.spec.name, e)
                return False
            except RetryableError as e:
                self.last_error = str(e)
                log.warning("source %r: retrying a batch: %s", self.spec.name, e)
                done.wait(RETRY_SECONDS)
                continue
            if rows is None:
                return True  # dropped before its commit
            with self._lock:
                self.committed_batches += 1
            self.metrics.committed(rows)
            crash_point("kafka.catalog_committed")
            self._committed.put(polled.positions)
            return True
        return True

    def _ingest(self, polled: _Polled, turn: Turn, done: threading.Event) -> int | None:
        """Write the batch, then -- at its turn -- commit it and advance its positions in one
        transaction; bad messages dead-letter. The rows written, or None when the batch
        was dropped before its commit (stopping, or one polled before it was fenced)."""
        body = polled.body
        payload = self._advance(polled.positions, polled.epochs) if self.spec.exactly_once else None
        encoded = None
        while body.ndjson and encoded is None:  # each pass dead-letters a message, or writes
            try:
                encoded = self.write_path.write_ndjson(
                    self.spec.table,
                    body.ndjson,
                    schema_evolve=self.spec.schema_evolve,
                    ingest_time_ns=time.time_ns(),
                    columns=body.columns,
                )
            except IngestError as e:
                if e.line is None:
                    raise
                bad = body.owner(e.line)
                self._dead_letter(polled.origins.of(bad), body.value(bad), e)
                body = body.without(bad)
        if not turn() or self._dropped(polled, done):
            if encoded is not None:
                self.write_path.discard(encoded.written)
            return None
        if encoded is None:  # tombstones, or every message dead-lettered
            if payload is not None:
                self.catalog.commit(self.spec.table, [], payload=payload)
            return 0
        source = f"kafka:{self.spec.name}"
        ack = self.write_path.commit_encoded(
            self.spec.table, encoded, source=source, payload=payload
        )
        return ack.rows

    def _advance(
        self, positions: dict[tuple[str, int], int], epochs: dict[tuple[str, int], int]
    ) -> Payload:
        """The payload moving ``positions``, under the epochs the batch was read with: a
        partition claimed again since (a rebalance, a newer worker) fences the batch."""
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

    def _dead_letter(self, origin: tuple[str, int, int], value: bytes, error: IngestError) -> None:
        """Record a message (its topic, partition, offset, and value) beside the table; its
        key makes a replayed batch write it once."""
        table = dead_letter_table(self.spec)
        try:
            self.catalog.get_table(table)
        except NotFoundError:
            self.catalog.create_table(table, DEAD_LETTER_COLUMNS, if_not_exists=True)
        topic, partition, offset = origin
        row = {
            "topic": topic,
            "partition": partition,
            "offset": offset,
            "raw_base64": base64.b64encode(value).decode(),
            "error": str(error),
        }
        key = f"kafka-dlq:{self.spec.name}:{topic}:{partition}:{offset}"
        self.write_path.ingest_ndjson(
            table, json.dumps(row).encode(), idempotency_key=key, source=f"kafka:{self.spec.name}"
        )
        log.warning("source %r: dead-lettered %s", self.spec.name, key)

    def _commit_to_kafka(self, consumer: Any) -> None:
        """Commit the positions of the batches written since, on the polling thread."""
        from confluent_kafka import KafkaException, TopicPartition

        positions: dict[tuple[str, int], int] = {}
        while not self._committed.empty():
            for key, offset in self._committed.get().items():
                positions[key] = max(offset, positions.get(key, offset))
        if not positions:
            return
        self._read_to.update(positions)
        offsets = [TopicPartition(t, p, o) for (t, p), o in positions.items()]
        try:
            # At least once, these offsets are where the next reader starts: wait for them.
            consumer.commit(offsets=offsets, asynchronous=self.spec.exactly_once)
        except KafkaException as e:  # exactly once, the catalog's positions are the truth
            self.last_error = f"offsets not committed to Kafka: {e}"
            log.warning("source %r: %s", self.spec.name, self.last_error)

    def _update_lag(self, consumer: Any) -> None:
        """Messages behind the high watermarks the client last fetched (no broker call)."""
        from confluent_kafka import KafkaException, TopicPartition

        now = time.monotonic()
        if now < self._lag_due:
            return
        self._lag_due = now + LAG_SECONDS
        lag = None
        for (topic, partition), position in list(self._read_to.items()):
            try:
                _, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), cached=True
                )
            except KafkaException:
                continue
            if high >= 0:
                lag = (lag or 0) + max(0, high - position)
        self.metrics.lag = lag


@dataclass
class _Polled:
    """A polled round, the fences acted on before it was polled, the epochs it was read under."""

    body: Body
    origins: Origins  # of every message, tombstones too
    fences_handled: int  # the polling thread's count when it was polled
    epochs: dict[tuple[str, int], int]
    positions: dict[tuple[str, int], int]  # where its partitions are read to after it

    @property
    def keys(self) -> frozenset[Hashable]:
        """Its partitions: batches sharing one commit one after another."""
        return frozenset(self.positions)


@contextlib.contextmanager
def _collector_paused(backlog: bool) -> Iterator[None]:
    """Under a ``backlog`` (the last call returned all it asked for, so this one returns at
    once), Python's garbage collector waits while a ``consume`` call's message objects live:
    they are tracked objects, and a collection while thousands of them are alive promotes
    them into the old generation, which every full collection traverses again. A pause is
    one call and its read (milliseconds); what came due meanwhile runs after it, as usual."""
    paused = backlog and gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


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
