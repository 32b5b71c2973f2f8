"""The cold path's shortcuts against a real Postgres holding the same rows: answers from
exact statistics (``count``/``min``/``max``, nothing read) and top-k by ``_timestamp``
(extents read in time order, fewer than all), before and after a DELETE, ties included."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pyarrow as pa
import pytest

from kyma.engine.storage.local import LocalStore
from kyma.stores import Stores

EXTENTS, PER_EXTENT = 8, 120
START = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def _rows() -> list[tuple[datetime.datetime, int, str, int | None]]:
    """Extents in time order, overlapping at their edges, with ties inside and across them
    (three rows a second), a rare word, nulls in ``v``."""
    rows = []
    for e in range(EXTENTS):
        for i in range(PER_EXTENT):
            n = e * PER_EXTENT + i
            second = (e * PER_EXTENT + i - (6 if i < 6 and e else 0)) // 3
            word = "needle" if n % 97 == 5 else f"w{n % 11}"
            rows.append(
                (
                    START + datetime.timedelta(seconds=second),
                    n,
                    word,
                    None if n % 7 == 0 else n % 50,
                )
            )
    return rows


ROWS = _rows()


@pytest.fixture(scope="module")
def kyma(module_catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kyma.services import wire_services
    from kyma.settings import Settings

    home = tmp_path_factory.mktemp("cold")
    stores = Stores.open(module_catalog_url)
    settings = Settings(home=home / "home", catalog_url=module_catalog_url, block_rows=32)
    services = wire_services(settings, stores, LocalStore(home / "objects"))
    try:
        services.query.execute("CREATE TABLE ev (n long, w string, v int)")
        for e in range(EXTENTS):
            part = ROWS[e * PER_EXTENT : (e + 1) * PER_EXTENT]
            ts, n, w, v = zip(*part, strict=True)
            batch = pa.record_batch(
                {
                    "_timestamp": pa.array(ts, pa.timestamp("ns", tz="UTC")),
                    "n": pa.array(n, pa.int64()),
                    "w": pa.array(w),
                    "v": pa.array(v, pa.int32()),
                }
            )
            services.write_path.ingest_batches("ev", [batch], source="test")
        yield services
    finally:
        services.close()
        stores.close()


@pytest.fixture(scope="module")
def oracle(pg_server_url: str) -> Iterator[psycopg.Connection]:
    name = f"oracle_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = f"{pg_server_url.rpartition('/')[0]}/{name}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SET TIME ZONE 'UTC'")
            conn.execute("CREATE TABLE ev (_timestamp timestamptz, n bigint, w text, v integer)")
            with conn.cursor().copy("COPY ev FROM STDIN") as copy:
                for row in ROWS:
                    copy.write_row(row)
            yield conn
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def answers(kyma, oracle, sql: str, stream: bool = False) -> tuple[list[tuple], list[tuple], dict]:
    result = kyma.query.execute(sql, stream=stream)
    assert result.live is None
    found = [tuple(r.values()) for r in result.table.to_pylist()]
    return found, oracle.execute(sql).fetchall(), result.stats


TOP_K = [
    "SELECT n, w FROM ev ORDER BY _timestamp DESC, n LIMIT 10",
    "SELECT n FROM ev ORDER BY _timestamp DESC, n DESC LIMIT 7 OFFSET 5",
    "SELECT _timestamp, n, v FROM ev WHERE v > 40 ORDER BY _timestamp, n LIMIT 25",
    "SELECT n, w FROM ev WHERE w = 'needle' ORDER BY _timestamp DESC, n LIMIT 3",
    "SELECT n FROM ev WHERE w = 'needle' ORDER BY _timestamp DESC, n LIMIT 100",
    "SELECT e.n FROM ev AS e WHERE e.v IS NULL ORDER BY e._timestamp ASC, e.n LIMIT 4",
    "SELECT _timestamp FROM ev ORDER BY _timestamp DESC LIMIT 11",
    "SELECT n * 2 AS _timestamp FROM ev ORDER BY _timestamp DESC LIMIT 3",
    "SELECT n FROM ev WHERE _timestamp < now() ORDER BY _timestamp DESC, n LIMIT 5",
    "SELECT n FROM ev WHERE w = 'absent' ORDER BY _timestamp DESC LIMIT 5",
]


@pytest.mark.parametrize("sql", TOP_K)
def test_top_k_by_time_answers_as_postgres(kyma, oracle, sql: str) -> None:
    found, expected, _ = answers(kyma, oracle, sql)
    assert found == expected


@pytest.mark.parametrize("stream", [False, True])  # streamed: as the Postgres protocol asks
def test_top_k_by_time_reads_the_newest_extents_only(kyma, oracle, stream: bool) -> None:
    found, expected, summary = answers(kyma, oracle, TOP_K[0], stream)
    assert found == expected
    assert summary["extents_after_catalog"] <= 2 < summary["extents_total"] == EXTENTS


STATISTICS = [
    "SELECT count(*), min(_timestamp), max(_timestamp) FROM ev",
    "SELECT min(n) AS lo, max(n), min(v), max(v), count(*) FROM ev",
    "SELECT max(e.n) FROM ev AS e",
]


@pytest.mark.parametrize("sql", STATISTICS)
def test_statistics_answer_as_postgres_reading_nothing(kyma, oracle, sql: str) -> None:
    found, expected, summary = answers(kyma, oracle, sql)
    assert found == expected
    assert summary["rows_scanned"] == summary["bytes_read"] == 0


def test_after_a_delete_both_still_answer_as_postgres(kyma, oracle) -> None:
    """The newest rows and the greatest ``n`` deleted: the extents' stats no longer bound
    them, so min/max are scanned; top-k skips the deleted rows."""
    delete = f"DELETE FROM ev WHERE n >= {EXTENTS * PER_EXTENT - 4} OR n = 0 OR w = 'needle'"
    kyma.query.execute(delete)
    oracle.execute(delete)
    for sql in [*STATISTICS, *TOP_K]:
        found, expected, _ = answers(kyma, oracle, sql)
        assert found == expected, sql


def test_a_repeated_statement_sees_each_commit(kyma) -> None:
    """The second run of a point query reuses its kept session; a new snapshot (an insert, a
    delete) is registered anew, whether the answer is whole or streamed."""
    engine = kyma.query
    engine.execute("CREATE TABLE small (id long, name string)")
    point = "SELECT name FROM small WHERE id = 2 ORDER BY name"

    def names(stream: bool = False) -> list[str]:
        result = engine.execute(point, stream=stream)
        assert result.live is None
        return result.table.column(0).to_pylist()

    def add(rows: list[tuple[int, str]]) -> None:
        ids, words = zip(*rows, strict=True)
        batch = pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array(words)})
        kyma.write_path.ingest_batches("small", [batch], source="test")

    add([(1, "a"), (2, "b")])
    assert names() == names() == names(stream=True) == ["b"]
    add([(2, "c")])
    assert names() == names(stream=True) == ["b", "c"]
    engine.execute("DELETE FROM small WHERE name = 'b'")
    assert names(stream=True) == names() == ["c"]


def test_a_repeated_statement_reads_the_clock_anew(kyma) -> None:
    """A kept session does not keep ``now()``: each run is its own transaction."""
    engine = kyma.query
    sql = "SELECT now() AS t, count(*) AS n FROM ev WHERE _timestamp < now()"
    times = [engine.execute(sql).table.column("t")[0].as_py() for _ in range(3)]
    assert times[0] < times[1] < times[2]
