"""How often the CDC loop reads the slot: at once while it has changes, soon after it comes
up empty, less often while the source stays quiet; and a quiet source costs no peek."""

from __future__ import annotations

import time

import numpy as np
import pytest
from cdc_helpers import body, drain, kyma

from kyma.connectors.postgres.cdc import _slot
from kyma.connectors.postgres.cdc._columnar import Messages
from kyma.connectors.postgres.cdc._pace import Pace
from kyma.engine.errors import FormatError


def test_the_wait_starts_short_doubles_while_quiet_and_resets_on_changes() -> None:
    pace = Pace(0.02, 0.2)
    assert [pace.after(n) for n in (5, 0, 0, 0, 0, 0, 0)] == [0.0, 0.02, 0.04, 0.08, 0.16, 0.2, 0.2]
    assert pace.after(1) == 0.0  # changes: the next step at once
    assert pace.after(0) == 0.02  # and the next quiet spell starts short again


def test_aggregated_messages_split_by_their_lengths() -> None:
    m = Messages.joined(b"B123C45", np.array([4, 3]))
    assert [m.message(i) for i in range(len(m))] == [b"B123", b"C45"]
    assert m.messages() == [b"B123", b"C45"]
    with pytest.raises(FormatError, match="7 bytes of messages, lengths add to 6"):
        Messages.joined(b"B123C45", np.array([4, 2]))
    with pytest.raises(FormatError, match="an empty message"):
        Messages.joined(b"B123", np.array([4, 0]))


def test_a_quiet_source_costs_no_peek(services, cdc_source, worker, monkeypatch) -> None:
    cdc_source.execute("CREATE TABLE items (id int PRIMARY KEY, name text)")
    services.connectors.create(body(cdc_source, ["public.items"]))
    w = worker()
    w.start()
    peeks = []
    real = _slot.peek
    monkeypatch.setattr(_slot, "peek", lambda *a: peeks.append(a) or real(*a))
    cdc_source.execute("INSERT INTO items VALUES (1, 'one')")
    assert drain(w) == 1
    assert peeks
    for _ in range(100):  # settle: the worker's heartbeat moves the WAL's end once more
        made = len(peeks)
        assert w.step() == 0
        if len(peeks) == made:
            break
        time.sleep(0.05)
    else:
        pytest.fail("every step peeked at the slot")
    made = len(peeks)
    assert [w.step() for _ in range(3)] == [0, 0, 0]
    assert len(peeks) == made  # the WAL did not move: nothing to read
    cdc_source.execute("INSERT INTO items VALUES (2, 'two')")
    assert drain(w) == 1
    assert len(peeks) > made
    got = kyma(services, "SELECT id, name FROM pg.public.items ORDER BY id").to_pylist()
    assert got == [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]


def test_a_peek_is_sized_by_the_bytes_of_the_last_one() -> None:
    from types import SimpleNamespace

    from kyma.connectors.postgres.cdc._worker import CdcWorker

    def limit(message_bytes: float, cap: int = 1_000_000) -> int:
        worker = SimpleNamespace(
            batch_bytes=64 * 2**20, batch_changes=cap, _message_bytes=message_bytes
        )
        return CdcWorker._limit(worker)  # type: ignore[arg-type]

    assert limit(92) == 729_444  # narrow rows: one step takes a large backlog whole
    assert limit(8) == 1_000_000  # at most batch_changes
    assert limit(2**20) == 1000  # wide rows: fewer per step, at least 1000
    assert limit(2**20, cap=10) == 10
