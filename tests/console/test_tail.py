"""Live tail's endpoint without a browser: one event a commit that appends, none for a DELETE
or TRUNCATE, the rows read from the commit's extents; errors before the stream starts."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import Console

from kyma.console.live import LiveHub, Subscription
from kyma.engine.catalog._commit import CommitEvent
from kyma.engine.errors import PoolExhaustedError


@contextmanager
def _stream(console: Console, path: str) -> Iterator[http.client.HTTPResponse]:
    url = urllib.parse.urlsplit(console.serve.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {console.token}"})
        yield conn.getresponse()
    finally:
        conn.close()


def _next_event(answer: http.client.HTTPResponse) -> dict:
    fields: dict[str, str] = {}
    for raw in answer:
        line = raw.decode().rstrip("\n")
        if not line and "data" in fields:
            return {**fields, "data": json.loads(fields["data"])}
        if line and not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    raise AssertionError("the stream ended")


def test_each_append_is_one_event_and_deletes_are_none(console: Console) -> None:
    console.sql("CREATE TABLE tailed (n long, word string, attrs dynamic)")
    console.call("/v1/ingest/tailed", [{"n": 1, "word": "before"}])
    with _stream(console, "/v1/tables/tailed/tail?limit=2") as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        assert answer.readline() == b"retry: 1000\n"  # subscribed: what commits now is sent
        console.sql("DELETE FROM tailed WHERE n = 1")
        console.sql("INSERT INTO tailed (n, word, attrs) VALUES (2, 'a', '{\"k\": [1]}')")
        rows = [{"n": n, "word": f"w{n}"} for n in (3, 4, 5)]
        console.call("/v1/ingest/tailed", rows)
        inserted, ingested = _next_event(answer), _next_event(answer)
    assert inserted["event"] == "rows" and inserted["id"] == str(inserted["data"]["snapshot_id"])
    names = [c["name"] for c in inserted["data"]["columns"]]
    assert names == ["_timestamp", "props", "n", "word", "attrs"]
    assert [r[2:] for r in inserted["data"]["rows"]] == [[2, "a", {"k": [1]}]]
    assert inserted["data"]["rows_committed"] == 1
    assert ingested["data"]["rows_committed"] == 3 and ingested["data"]["dropped"] == 0
    assert [r[2:4] for r in ingested["data"]["rows"]] == [[4, "w4"], [5, "w5"]]  # the newest 2
    snapshots = [inserted["data"]["snapshot_id"], ingested["data"]["snapshot_id"]]
    assert snapshots[1] == snapshots[0] + 1


def test_a_missing_table_or_a_bad_limit_is_refused_before_the_stream(console: Console) -> None:
    with _stream(console, "/v1/tables/nowhere/tail") as answer:
        assert answer.status == 404 and json.load(answer)["error"] == "not_found_error"
    with _stream(console, "/v1/tables/logs/tail?limit=0") as answer:
        assert answer.status == 400 and "limit" in json.load(answer)["message"]


def _event(table: str, rows: int = 1, appends: bool = True) -> CommitEvent:
    return CommitEvent(table, "rest", rows, 10, 1, 0.0, 7, (), appends)


def test_the_hub_hands_appends_to_the_tails_of_their_table() -> None:
    hub = LiveHub(max_subscribers=2)
    with hub.subscribe("a") as a, hub.subscribe("b") as b:
        with pytest.raises(PoolExhaustedError), hub.subscribe("a"):
            pass
        hub.publish(_event("a"))
        hub.publish(_event("a", appends=False))  # a compaction, DELETE, UPDATE
        hub.publish(_event("a", rows=0))
        assert a.next(0) == _event("a") and a.next(0) is None
        assert b.next(0) is None
    with hub.subscribe("a"):  # both left: two may subscribe again
        pass


def test_a_tail_that_falls_behind_loses_the_oldest_commits() -> None:
    subscription = Subscription("a")
    for snapshot in range(300):
        subscription.put(CommitEvent("a", "rest", 1, 1, 1, 0.0, snapshot))
    assert subscription.dropped == 300 - 256
    first = subscription.next(0)
    assert first is not None and first.snapshot_id == 300 - 256
