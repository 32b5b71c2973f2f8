"""Source positions commit with the extents they cover; zombies and rewinds are refused."""

from __future__ import annotations

import uuid

import pytest

from kyma.engine.errors import FencedWriterError
from kyma.engine.format import ExtentWriteResult
from kyma.engine.types import Column, KymaType
from kyma.ingest.kafka.positions import advance as advance_positions
from kyma.stores import Stores


def extent(rows: int = 10) -> ExtentWriteResult:
    extent_id = str(uuid.uuid4())
    return ExtentWriteResult(
        extent_id=extent_id,
        object_path=f"tables/1/{extent_id}.tlm",
        byte_size=100,
        row_count=rows,
        block_count=1,
        min_timestamp_nanos=0,
        max_timestamp_nanos=1,
        column_stats={},
        present_paths=[],
    )


@pytest.fixture
def clicks(stores: Stores) -> Stores:
    stores.catalog.create_table("clicks", [Column("n", KymaType("long"))])
    return stores


def test_claims_bump_epochs_and_start_where_told(clicks: Stores) -> None:
    first = clicks.sources.positions.claim("src", "topic", [0, 1], start=0)
    assert [(c.epoch, c.position) for c in first.values()] == [(1, 0), (1, 0)]
    again = clicks.sources.positions.claim("src", "topic", [1])
    assert (again[1].epoch, again[1].position) == (2, 0)


def test_positions_advance_only_with_their_extents(clicks: Stores) -> None:
    claim = clicks.sources.positions.claim("src", "topic", [0, 1])
    moves = {0: (claim[0].epoch, 40), 1: (claim[1].epoch, 7)}
    clicks.catalog.commit("clicks", [extent()], payload=advance_positions("src", "topic", moves))
    stored = {(p.partition, p.position) for p in clicks.sources.positions.positions("src")}
    assert stored == {(0, 40), (1, 7)}
    assert len(clicks.catalog.live_extents("clicks")) == 1


def test_a_zombie_writer_cannot_commit(clicks: Stores) -> None:
    zombie = clicks.sources.positions.claim("src", "topic", [0])[0]
    owner = clicks.sources.positions.claim("src", "topic", [0])[0]  # a rebalance gave it away
    with pytest.raises(FencedWriterError, match="epoch 1 was superseded by 2"):
        clicks.catalog.commit(
            "clicks", [extent()], payload=advance_positions("src", "topic", {0: (zombie.epoch, 5)})
        )
    assert clicks.catalog.live_extents("clicks") == []  # the extent did not land either
    clicks.catalog.commit(
        "clicks", [extent()], payload=advance_positions("src", "topic", {0: (owner.epoch, 5)})
    )
    assert [p.position for p in clicks.sources.positions.positions("src")] == [5]


def test_positions_never_go_back(clicks: Stores) -> None:
    claim = clicks.sources.positions.claim("src", "topic", [0])[0]
    clicks.catalog.commit(
        "clicks", [extent()], payload=advance_positions("src", "topic", {0: (1, 10)})
    )
    with pytest.raises(FencedWriterError, match="position 4 is behind the stored 10"):
        clicks.catalog.commit(
            "clicks", [extent()], payload=advance_positions("src", "topic", {0: (claim.epoch, 4)})
        )
    assert len(clicks.catalog.live_extents("clicks")) == 1
    assert [p.position for p in clicks.sources.positions.positions("src")] == [10]


def test_an_unclaimed_partition_cannot_advance(clicks: Stores) -> None:
    with pytest.raises(FencedWriterError, match="never claimed"):
        clicks.catalog.commit(
            "clicks", [extent()], payload=advance_positions("src", "t", {3: (1, 1)})
        )
