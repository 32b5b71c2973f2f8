"""kyma's Spark jobs on a real standalone cluster: a master and two workers (1 core, 512 MiB
each) started from pyspark's distribution on loopback, kyma's object store on moto's S3
server, and ``kyma`` commands run with ``KYMA_SPARK_MASTER=spark://127.0.0.1:…``.

One cluster for the module. The CDC snapshot runs first, on both workers; the bulk load then
loses a worker mid-job (Spark retries its task on the other), and compaction runs on what is
left. Each job commits exactly once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import boto3
import pytest
from loopback import S3_CREDENTIALS, make_s3_store, server_tmpdir
from spark_cluster import Cluster, start_cluster

from kyma.engine.gc import collect_orphans

# The CDC tests' logical-WAL source Postgres and their helpers, shared rather than copied.
_CDC = Path(__file__).parents[1] / "cdc"
sys.path.insert(0, str(_CDC))
_spec = importlib.util.spec_from_file_location("cdc_conftest", _CDC / "conftest.py")
assert _spec is not None and _spec.loader is not None
_cdc_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cdc_conftest)
cdc_server, cdc_source = _cdc_conftest.cdc_server, _cdc_conftest.cdc_source
from cdc_helpers import body, cdc_sync_process  # noqa: E402

FILES, PER_FILE = 8, 5_000
JOB_SECONDS = 240


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    home = server_tmpdir("kyma-spark-cluster-")
    started = start_cluster(home)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def s3_services(stores, s3_endpoint, tmp_path):  # type: ignore[no-untyped-def]
    """The server's parts on a fresh bucket of moto's S3 server."""
    from kyma.services import wire_services
    from kyma.settings import Settings

    store = make_s3_store(s3_endpoint, tmp_path / "cache")
    settings = Settings(
        home=tmp_path / "home",
        catalog_url=stores.catalog.url,
        block_rows=1024,
        object_store=store.url,
        s3_endpoint_url=s3_endpoint,
        s3_access_key_id=S3_CREDENTIALS["access_key_id"],
        s3_secret_access_key=S3_CREDENTIALS["secret_access_key"],
    )
    services = wire_services(settings, stores, store)
    yield services
    services.close()


def kyma_env(services, cluster: Cluster, home: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A kyma process on the test's catalog and S3 store, its jobs on the cluster."""
    s = services.settings
    return {
        **os.environ,
        "KYMA_HOME": str(home),
        "KYMA_CATALOG_URL": s.catalog_url,
        "KYMA_OBJECT_STORE": s.object_store,
        "KYMA_S3_ENDPOINT_URL": s.s3_endpoint_url,
        "KYMA_S3_ACCESS_KEY_ID": s.s3_access_key_id,
        "KYMA_S3_SECRET_ACCESS_KEY": s.s3_secret_access_key,
        "KYMA_BLOCK_ROWS": "1024",
        **cluster.env,
    }


def count(services, sql: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return services.query.execute(sql).table.to_pylist()


def extent_objects(services) -> list[str]:  # type: ignore[no-untyped-def]
    bucket, _, prefix = services.settings.object_store.removeprefix("s3://").partition("/")
    client = boto3.client(
        "s3",
        endpoint_url=services.settings.s3_endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=S3_CREDENTIALS["access_key_id"],
        aws_secret_access_key=S3_CREDENTIALS["secret_access_key"],
    )
    listed = client.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/tables/")
    return [o["Key"] for o in listed.get("Contents", []) if o["Key"].endswith(".parquet")]


def test_a_cdc_snapshot_runs_on_the_cluster(cluster, s3_services, cdc_source, tmp_path) -> None:
    cdc_source.execute(
        "CREATE TABLE big (id int PRIMARY KEY, grp int NOT NULL, pad text);"
        " INSERT INTO big SELECT g, g % 7, repeat(md5(g::text), 4)"
        " FROM generate_series(1, 8000) g"
    )
    spec = body(cdc_source, ["public.big"], mode="both")
    spec["sync"].update(spark_min_bytes=1, chunk_bytes=128 * 1024)
    s3_services.connectors.create(spec)
    log = tmp_path / "cdc-sync.log"
    env = kyma_env(s3_services, cluster, tmp_path / "home")
    env = {k: v for k, v in env.items() if k.startswith(("KYMA_", "SPARK_", "PYSPARK_"))}
    proc = cdc_sync_process(s3_services.settings.catalog_url, tmp_path / "unused", log, **env)
    try:
        deadline = time.monotonic() + JOB_SECONDS
        want = [{"n": 8_000, "g": sum(g % 7 for g in range(1, 8_001))}]
        sql = "SELECT count(*) AS n, sum(grp) AS g FROM pg.public.big"
        while s3_services.connectors.status("pg")["sync"]["phase"] != "streaming":
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        assert count(s3_services, sql) == want
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    extents = s3_services.catalog.live_extents("pg__public__big")
    first = min(e.added_snapshot_id for e in extents)
    assert len([e for e in extents if e.added_snapshot_id == first]) >= 4  # one per chunk
    assert all(e.object_path.endswith(".parquet") for e in extents)
    assert cluster.tasks_run(0) and cluster.tasks_run(1), "a worker ran no task"


def test_a_load_survives_a_killed_worker_and_compaction_runs_on_the_cluster(
    cluster, s3_services, tmp_path
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for i in range(FILES):
        with (inputs / f"part-{i}.ndjson").open("w") as f:
            for n in range(i * PER_FILE, (i + 1) * PER_FILE):
                f.write(json.dumps({"n": n, "host": f"h{n % 7}", "pad": "x" * 64}) + "\n")
    s3_services.query.execute("CREATE TABLE bulk (n long, host string, pad string)")
    home = tmp_path / "home"
    env = kyma_env(s3_services, cluster, home)
    log = (tmp_path / "load.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kyma", "load", "bulk", str(inputs)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + JOB_SECONDS
        # until a task has written its extent and worker 0 is in the middle of another
        while not (extent_objects(s3_services) and cluster.busy(0)):
            assert proc.poll() is None, (tmp_path / "load.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no extent written in time"
            time.sleep(0.05)
        cluster.kill_worker(0)
        assert proc.wait(timeout=JOB_SECONDS) == 0, (home / "spark.log").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=30)
        log.close()
    spark_log = (home / "spark.log").read_text()
    assert "Lost executor" in spark_log, spark_log[-3000:]
    assert cluster.retried(1), "the lost task was not run again"
    total = FILES * PER_FILE
    sql = "SELECT count(*) AS c, count(DISTINCT n) AS d FROM bulk"
    assert count(s3_services, sql) == [{"c": total, "d": total}]
    (snapshot,) = s3_services.catalog.snapshots("bulk")  # exactly one commit
    assert snapshot.summary["source"] == "load"
    assert len(s3_services.catalog.live_extents("bulk")) == FILES  # one per split, no repeat
    orphans = collect_orphans(s3_services.catalog, s3_services.store, timedelta(0))
    assert len(extent_objects(s3_services)) == FILES  # a lost attempt's object, if any: GC'd
    assert len(orphans) <= 1

    ran = cluster.tasks_run(1)
    done = subprocess.run(
        [sys.executable, "-m", "kyma", "compact", "bulk"],
        env={**env, "KYMA_COMPACTION_TARGET_ROWS": str(total * 4)},
        capture_output=True,
        timeout=JOB_SECONDS,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert "Lost executor" not in (home / "spark.log").read_text()[len(spark_log) :]
    assert count(s3_services, sql) == [{"c": total, "d": total}]
    extents = s3_services.catalog.live_extents("bulk")
    assert len(extents) == 1 and extents[0].row_count == total
    sources = [s.summary["source"] for s in s3_services.catalog.snapshots("bulk")]
    assert sources == ["load", "compaction"]
    assert cluster.tasks_run(1) > ran  # compaction's task ran on the worker left
