"""Direct assignment: a worker reads every partition of its source's topics, no group join.

A restarted worker reads again at once: nothing waits for a group coordinator to expire
the member that died (with a consumer group that is the session timeout, or longer). The
catalog decides who owns a partition: taking one claims it (its epoch goes up), so the
newest worker wins, and a worker whose commit is fenced by a newer claim lets those
partitions go for good. The topics' partitions are looked up again every
``REFRESH_SECONDS``, so partitions and topics that appear later are read too.
"""

from __future__ import annotations

import time
from typing import Any

REFRESH_SECONDS = 5.0  # how often the topics' partitions are looked up again
RETRY_SECONDS = 1.0  # ... while the broker has not answered yet
METADATA_TIMEOUT = 2.0


class DirectAssignment:
    """Which partitions of ``topics`` this worker has taken, let go, or not seen yet."""

    def __init__(self, topics: tuple[str, ...]) -> None:
        self.topics = topics
        self.taken: set[tuple[str, int]] = set()
        self.released: set[tuple[str, int]] = set()  # fenced by a newer worker: never again
        self.missing: set[str] = set()  # topics the broker does not know (yet)
        self._due = 0.0

    def new_partitions(self, consumer: Any) -> list[Any] | None:
        """The partitions to take now, or None when the lookup is not due yet.

        Raises the client's KafkaException when the broker does not answer."""
        from confluent_kafka import TopicPartition

        now = time.monotonic()
        if now < self._due:
            return None
        self._due = now + RETRY_SECONDS
        found = []
        missing = set()
        for topic in self.topics:
            metadata = consumer.list_topics(topic, timeout=METADATA_TIMEOUT).topics.get(topic)
            if metadata is None or metadata.error is not None or not metadata.partitions:
                missing.add(topic)
                continue
            found += [(topic, p) for p in sorted(metadata.partitions)]
        self._due = now + REFRESH_SECONDS
        self.missing = missing
        fresh = [tp for tp in found if tp not in self.taken and tp not in self.released]
        return [TopicPartition(t, p) for t, p in fresh]

    def took(self, partitions: list[Any]) -> None:
        self.taken.update((tp.topic, tp.partition) for tp in partitions)

    def release(self, lost: list[tuple[str, int]], again: list[tuple[str, int]]) -> None:
        """Never take ``lost`` again (a newer worker has them); take ``again`` at once."""
        self.taken.difference_update(lost + again)
        self.released.update(lost)
        if again:
            self._due = 0.0
