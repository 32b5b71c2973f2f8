"""NDJSON ingests coerced and written in worker processes answer as they do in the server."""

from __future__ import annotations

import inspect
import os
import pickle
import signal
import time
from pathlib import Path

import pytest

from kyma.engine import errors
from kyma.engine.errors import IngestError, IngestWorkerError, KymaError
from kyma.engine.storage.local import LocalStore
from kyma.services import wire_services
from kyma.settings import Settings

BAD_BODY = b'{"n": 1}\n{"n": "many"}\n'


def _error_classes() -> list[type[KymaError]]:
    return [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, KymaError) and c.__module__ == errors.__name__
    ]


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_every_kyma_error_pickles_with_its_message_and_attributes(cls: type[KymaError]) -> None:
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    named = [p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    args = [f"value of {p.name}" for p in named] if named else ["what went wrong"]
    if cls is IngestError or issubclass(cls, IngestError):
        args = ["line 2: field 'n': expected long", 2, "n"]
    error = cls(*args)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is cls
    assert str(back) == str(error)
    assert back.args == error.args
    assert vars(back) == vars(error)


def _with_settings(stores, tmp_path: Path, **overrides):  # type: ignore[no-untyped-def]
    settings = Settings(
        home=tmp_path / "home", catalog_url=stores.catalog.url, block_rows=1024, **overrides
    )
    return wire_services(settings, stores, LocalStore(tmp_path / "objects"))


@pytest.fixture
def services(stores, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The server's parts with two ingest workers (kyma's default is none)."""
    services = _with_settings(stores, tmp_path, ingest_workers=2, idempotency_wait_seconds=5)
    yield services
    services.close()


def test_with_workers_set_a_busy_server_hands_bodies_to_them(services) -> None:
    services.query.execute("CREATE TABLE pooled (a long)")
    with services.write_path.server_slot:  # the server is busy: bodies go to a worker
        ack = services.write_path.ingest_ndjson("pooled", b'{"a": 1}\n{"a": 2}\n')
    assert ack.rows == 2 and ack.snapshot_id is not None
    workers = services.write_path.workers
    assert workers is not None and workers.size == 2
    assert workers.pids() and os.getpid() not in workers.pids()
    rows = services.query.execute("SELECT count(*) AS n FROM pooled").table.to_pylist()
    assert rows == [{"n": 2}]


def test_a_bad_line_answers_the_same_400_through_the_pool(services, stores, tmp_path) -> None:
    services.query.execute("CREATE TABLE typed_n (n long)")
    with services.write_path.server_slot, pytest.raises(IngestError) as pooled:
        services.write_path.ingest_ndjson("typed_n", BAD_BODY)
    assert services.write_path.workers is not None and services.write_path.workers.pids()
    in_process = _with_settings(stores, tmp_path / "off", ingest_workers=0)  # same catalog
    try:
        assert in_process.write_path.workers is None
        with pytest.raises(IngestError) as local:
            in_process.write_path.ingest_ndjson("typed_n", BAD_BODY)
    finally:
        in_process.close()
    assert type(pooled.value) is type(local.value)
    assert str(pooled.value) == str(local.value)
    assert (
        (pooled.value.line, pooled.value.field) == (local.value.line, local.value.field) == (2, "n")
    )

    from kyma.server import create_app

    with services.write_path.server_slot:
        answer = create_app(services).test_client().post("/v1/ingest/typed_n", data=BAD_BODY)
    assert answer.status_code == 400
    assert str(local.value) in answer.get_json()["message"]
    assert services.catalog.live_extents("typed_n") == []


def test_schema_evolution_still_widens_the_table(services) -> None:
    services.query.execute("CREATE TABLE evolving (a long)")
    with services.write_path.server_slot:
        services.write_path.ingest_ndjson("evolving", b'{"a": 1}\n')
        ack = services.write_path.ingest_ndjson(
            "evolving", b'{"a": 2, "region": "eu", "Odd Key": 1}\n'
        )
        assert ack.new_columns == ["region"] and ack.props_fields == ["Odd Key"]
        assert services.catalog.get_table("evolving").column("region") is not None
        again = services.write_path.ingest_ndjson("evolving", b'{"a": 3, "region": "us"}\n')
    assert again.new_columns == [] and again.rows == 1
    rows = services.query.execute(
        "SELECT region FROM evolving WHERE region IS NOT NULL ORDER BY region"
    ).table.to_pylist()
    assert rows == [{"region": "eu"}, {"region": "us"}]
    off = services.write_path.ingest_ndjson("evolving", b'{"later": 1}\n', schema_evolve=False)
    assert off.dropped_fields == ["later"]


def test_by_default_there_are_no_workers_and_everything_runs_in_process(stores, tmp_path) -> None:
    services = _with_settings(stores, tmp_path)
    try:
        assert services.write_path.workers is None
        services.query.execute("CREATE TABLE local_only (a long)")
        ack = services.write_path.ingest_ndjson("local_only", b'{"a": 1}\n{"b": "x"}\n')
        assert ack.rows == 2 and ack.new_columns == ["b"]
    finally:
        services.close()


def test_a_dead_worker_fails_one_request_cleanly_and_the_next_succeeds(services) -> None:
    services.query.execute("CREATE TABLE survivor (a long)")
    write_path = services.write_path
    with write_path.server_slot:
        write_path.ingest_ndjson("survivor", b'{"a": 1}\n')
    workers = write_path.workers
    assert workers is not None
    victims = workers.pids()
    assert victims
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in victims) and time.monotonic() < deadline:
        time.sleep(0.02)
    from kyma.server import create_app

    with write_path.server_slot:
        answer = create_app(services).test_client().post("/v1/ingest/survivor", data=b'{"a": 2}\n')
    assert answer.status_code == 503, answer.get_json()
    assert "worker process died" in answer.get_json()["message"]
    with write_path.server_slot:
        ack = write_path.ingest_ndjson("survivor", b'{"a": 3}\n')
    assert ack.rows == 1
    assert set(workers.pids()).isdisjoint(victims)
    rows = services.query.execute("SELECT a FROM survivor ORDER BY a").table.to_pylist()
    assert rows == [{"a": 1}, {"a": 3}]


def test_a_closed_pool_refuses_work_with_a_kyma_error(stores, tmp_path) -> None:
    services = _with_settings(stores, tmp_path, ingest_workers=1)
    services.query.execute("CREATE TABLE closing (a long)")
    with services.write_path.server_slot:
        services.write_path.ingest_ndjson("closing", b'{"a": 1}\n')
    pids = services.write_path.workers.pids()
    services.close()
    assert not any(_running(pid) for pid in pids)
    with services.write_path.server_slot, pytest.raises(IngestWorkerError, match="shut down"):
        services.write_path.ingest_ndjson("closing", b'{"a": 2}\n')


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_large_arrow_batches_are_written_by_the_workers(services) -> None:
    import pyarrow as pa

    services.query.execute("CREATE TABLE batched (n long, s string)")
    sizes = (1500, 10, 2500, 1200, 1000)  # the 10-row batch is written in process
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    batches = [
        pa.record_batch({"n": pa.array(range(start, start + size), pa.int32())})
        for start, size in zip(starts, sizes, strict=True)
    ]
    ack = services.write_path.ingest_batches("batched", iter(batches), source="test")
    assert ack.rows == sum(sizes)
    workers = services.write_path.workers
    assert workers is not None and workers.pids()
    extents = services.catalog.live_extents("batched")
    assert sorted(e.row_count for e in extents) == sorted(sizes)
    rows = services.query.execute(
        "SELECT count(*) AS n, count(DISTINCT n) AS d, min(n) AS lo, max(n) AS hi FROM batched"
    ).table.to_pylist()
    assert rows == [{"n": sum(sizes), "d": sum(sizes), "lo": 0, "hi": sum(sizes) - 1}]


def test_a_bad_arrow_batch_in_a_worker_fails_the_same_and_leaves_no_objects(services) -> None:
    import pyarrow as pa

    from kyma.engine.errors import SchemaError

    services.query.execute("CREATE TABLE cast_me (n int)")
    good = pa.record_batch({"n": pa.array(range(2000), pa.int64())})
    bad = pa.record_batch({"n": pa.array(["seven"] * 1500)})
    with pytest.raises(SchemaError) as pooled:
        services.write_path.ingest_batches("cast_me", [good, good, bad, good], source="test")
    assert str(pooled.value).startswith("column 'n': cannot store string as int32")
    assert services.catalog.live_extents("cast_me") == []
    prefix = services.catalog.get_table("cast_me").path_prefix
    assert list(services.store.list(prefix)) == []


def test_a_large_body_travels_through_shared_memory_and_none_is_left(services) -> None:
    from kyma.ingest.encode_workers import SHARE_MIN_BYTES, SHM_DIR

    services.query.execute("CREATE TABLE big (n long)")
    body = b"".join(b'{"n": %d}\n' % i for i in range(40_000))
    assert len(body) > SHARE_MIN_BYTES
    before = set(SHM_DIR.glob("psm_*"))
    with services.write_path.server_slot:
        ack = services.write_path.ingest_ndjson("big", body)
        assert ack.rows == 40_000
        with pytest.raises(IngestError) as bad:
            services.write_path.ingest_ndjson("big", body + b'{"n": "x"}\n')
    assert bad.value.line == 40_001 and bad.value.field == "n"
    assert str(bad.value).startswith("line 40001")
    assert set(SHM_DIR.glob("psm_*")) - before == set()
    rows = services.query.execute("SELECT count(*) AS c, sum(n) AS s FROM big").table.to_pylist()
    assert rows == [{"c": 40_000, "s": sum(range(40_000))}]


def test_a_negative_worker_count_is_refused(stores, tmp_path) -> None:
    from kyma.engine.errors import ConfigError

    with pytest.raises(ConfigError, match="KYMA_INGEST_WORKERS: expected 0 or more, got -1"):
        _with_settings(stores, tmp_path, ingest_workers=-1)


def test_a_lone_body_is_encoded_in_the_server_without_a_worker(services) -> None:
    services.query.execute("CREATE TABLE lone (a long)")
    write_path = services.write_path
    with write_path.server_slot:
        write_path.ingest_ndjson("lone", b'{"a": 1}\n')  # starts the workers
    workers = write_path.workers
    assert workers is not None
    victims = workers.pids()
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in victims) and time.monotonic() < deadline:
        time.sleep(0.02)
    ack = write_path.ingest_ndjson("lone", b'{"a": 2}\n')  # never touches the dead pool
    assert ack.rows == 1 and not write_path.server_slot.locked()
    with write_path.server_slot, pytest.raises(IngestWorkerError):
        write_path.ingest_ndjson("lone", b'{"a": 3}\n')
    rows = services.query.execute("SELECT a FROM lone ORDER BY a").table.to_pylist()
    assert rows == [{"a": 1}, {"a": 2}]
