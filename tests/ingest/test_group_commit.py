"""Group commit: requests for one table that are ready while its commit is in flight share
the next snapshot, each with its own idempotency key, acknowledgement and payload."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kyma.engine.errors import FencedWriterError
from kyma.ingest.kafka.positions import advance as advance_positions
from kyma.ingest.write_path import IngestAck

WAIT = 60


@pytest.fixture
def clicks(services):  # type: ignore[no-untyped-def]
    services.query.execute("CREATE TABLE clicks (n long)")
    return services


def _body(*numbers: int) -> bytes:
    return b"".join(b'{"n": %d}\n' % n for n in numbers)


def _behind_a_held_commit(
    services: Any, queued: list[Callable[[], IngestAck]]
) -> tuple[IngestAck, list[IngestAck | BaseException]]:
    """One request whose commit is held until every one of ``queued`` waits for the next
    commit of the table; its ack and theirs (or the error each raised)."""
    committing, release = threading.Event(), threading.Event()

    def hold(cur, snapshot_id: int) -> None:  # type: ignore[no-untyped-def]
        committing.set()
        release.wait(WAIT)

    write_path = services.write_path
    with ThreadPoolExecutor(1 + len(queued)) as pool:
        try:
            first = pool.submit(write_path.ingest_ndjson, "clicks", _body(0), payload=hold)
            assert committing.wait(WAIT)
            others = [pool.submit(q) for q in queued]
            assert write_path.commits.waiting("clicks", WAIT, at_least=len(queued)) == len(queued)
        finally:
            release.set()
        return first.result(WAIT), [f.exception(WAIT) or f.result() for f in others]


def test_waiting_requests_share_one_snapshot_each_with_its_own_ack(clicks) -> None:
    ingest = clicks.write_path.ingest_ndjson
    first, (a, b) = _behind_a_held_commit(
        clicks,
        [
            lambda: ingest("clicks", _body(1, 2), idempotency_key="key-a"),
            lambda: ingest("clicks", _body(3, 4, 5), idempotency_key="key-b"),
        ],
    )
    assert isinstance(a, IngestAck) and isinstance(b, IngestAck)
    assert (a.rows, b.rows) == (2, 3)
    assert a.snapshot_id == b.snapshot_id != first.snapshot_id
    history = [s.snapshot_id for s in clicks.catalog.snapshots("clicks")]
    assert first.snapshot_id in history and a.snapshot_id in history
    assert len(history) == 2  # not one a request
    replay_a = ingest("clicks", _body(1, 2), idempotency_key="key-a")
    replay_b = ingest("clicks", _body(3, 4, 5), idempotency_key="key-b")
    assert (replay_a.replayed, replay_a.rows, replay_a.snapshot_id) == (True, 2, a.snapshot_id)
    assert (replay_b.replayed, replay_b.rows, replay_b.snapshot_id) == (True, 3, a.snapshot_id)
    rows = clicks.query.execute("SELECT n FROM clicks ORDER BY n").table.column("n").to_pylist()
    assert rows == [0, 1, 2, 3, 4, 5]


def test_a_failing_request_of_a_group_fails_alone(clicks, tmp_path) -> None:
    positions = clicks.stores.sources.positions
    stale = positions.claim("src", "clicks", [0])[0]
    positions.claim("src", "clicks", [0])  # a newer claim fences the stale one
    ingest = clicks.write_path.ingest_ndjson
    fenced = advance_positions("src", "clicks", {0: (stale.epoch, 3)})
    first, (good, bad) = _behind_a_held_commit(
        clicks,
        [
            lambda: ingest("clicks", _body(7), idempotency_key="good"),
            lambda: ingest("clicks", _body(8, 9), idempotency_key="bad", payload=fenced),
        ],
    )
    assert isinstance(good, IngestAck) and good.rows == 1
    assert isinstance(bad, FencedWriterError)
    rows = clicks.query.execute("SELECT n FROM clicks ORDER BY n").table.column("n").to_pylist()
    assert rows == [0, 7]
    assert clicks.stores.ledger.lookup("bad") is None
    assert clicks.stores.ledger.lookup("good") is not None


def test_a_group_fsyncs_each_extent_once_and_the_table_folder_once(clicks, monkeypatch) -> None:
    """Three requests committed as one snapshot: three extent files and one folder fsync
    (each request's extent was two: its file, then its folder)."""
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    ingest = clicks.write_path.ingest_ndjson
    first, rest = _behind_a_held_commit(
        clicks, [lambda: ingest("clicks", _body(1)), lambda: ingest("clicks", _body(2))]
    )
    assert rest[0].snapshot_id == rest[1].snapshot_id != first.snapshot_id
    assert len(synced) == 3 + 2  # the held request's folder, then the group's
