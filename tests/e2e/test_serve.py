"""``kyma serve`` end to end: a real process on the embedded default, killed every way."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from serve_helpers import Serve, postmaster_pid


@pytest.fixture
def home():
    # Outside /tmp/pytest-of-root (mode 700), so the postgres user can reach it.
    path = Path(tempfile.mkdtemp(prefix="kyma-serve-", dir="/tmp")) / "home"
    yield path
    pid = postmaster_pid(path)
    if pid:
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(path.parent, ignore_errors=True)


def test_first_start_serves_and_sigterm_shuts_postgres_down(home: Path) -> None:
    serve = Serve(home)
    assert serve.get("/healthz") == (200, {"status": "ok"})
    status, ready = serve.get("/readyz")
    assert status == 200 and ready["status"] == "ready"
    serve.sql("CREATE TABLE logs (service_name string)")
    text = "".join(serve.output)
    assert "catalog       postgresql://kyma:***@127.0.0.1:" in text
    assert f"object store  file://{home.absolute()}/objects" in text
    assert serve.stop(signal.SIGTERM) == 0
    assert postmaster_pid(home) is None
    assert (home / "catalog" / "PG_VERSION").exists()
    assert (home / "objects").is_dir()


def test_restart_reuses_the_data(home: Path) -> None:
    first = Serve(home)
    first.sql("CREATE TABLE logs (service_name string)")
    assert first.stop(signal.SIGINT) == 0
    second = Serve(home)
    assert second.sql("SHOW TABLES")["rows"][0][0] == "logs"
    assert second.stop() == 0, "".join(second.output)


def test_kill_9_of_serve_leaves_postgres_which_the_next_start_adopts(home: Path) -> None:
    first = Serve(home)
    first.sql("CREATE TABLE logs (service_name string)")
    pid = postmaster_pid(home)
    first.proc.kill()
    first.proc.wait(timeout=30)
    assert postmaster_pid(home) == pid, "Postgres should outlive a killed kyma serve"
    second = Serve(home)
    assert "adopted the PostgreSQL already running" in "".join(second.output)
    assert second.sql("SHOW TABLES")["rows"][0][0] == "logs"
    assert second.stop() == 0, "".join(second.output)
    assert postmaster_pid(home) is None


def test_kill_9_of_serve_and_postgres_recovers(home: Path) -> None:
    first = Serve(home)
    first.sql("CREATE TABLE logs (service_name string)")
    pid = postmaster_pid(home)
    assert pid is not None
    first.proc.kill()
    os.kill(pid, signal.SIGKILL)
    first.proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while postmaster_pid(home) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    second = Serve(home)
    assert second.sql("SHOW TABLES")["rows"][0][0] == "logs"
    assert second.stop() == 0, "".join(second.output)


def test_external_catalog_and_s3_store(pg_server_url: str, s3_store, tmp_path: Path) -> None:
    env = {
        "KYMA_CATALOG_URL": pg_server_url,
        "KYMA_OBJECT_STORE": s3_store.url,
        "KYMA_S3_ENDPOINT_URL": s3_store._client.meta.endpoint_url,
        "KYMA_S3_ACCESS_KEY_ID": "testing",
        "KYMA_S3_SECRET_ACCESS_KEY": "testing",
    }
    serve = Serve(tmp_path / "home", **env)
    assert serve.get("/readyz")[0] == 200
    text = "".join(serve.output)
    assert f"object store  {s3_store.url}" in text
    assert "started PostgreSQL" not in text
    assert not (tmp_path / "home" / "catalog").exists()
    # Extents land on S3 as Parquet; a query range-reads their projected column chunks.
    serve.sql("CREATE TABLE e2e_s3 (n long, host string)")
    body = "".join(json.dumps({"n": n, "host": f"h{n % 3}"}) + "\n" for n in range(3000))
    request = urllib.request.Request(f"{serve.url}/v1/ingest/e2e_s3", data=body.encode())
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200
    got = serve.sql(
        "SELECT host, count(*) AS c, sum(n) AS s FROM e2e_s3 GROUP BY host ORDER BY host"
    )
    assert got["rows"] == [[f"h{h}", 1000, sum(range(h, 3000, 3))] for h in range(3)]
    keys = [o.key for o in s3_store.list("tables/")]
    assert keys and all(k.endswith(".parquet") for k in keys)
    assert serve.stop() == 0, "".join(serve.output)


def test_signals_during_shutdown_still_exit_0_and_stop_postgres(home: Path) -> None:
    """A second SIGTERM or a SIGINT while shutting down (docker stop, Ctrl-C twice) is no error."""
    serve = Serve(home)
    serve.sql("CREATE TABLE logs (service_name string)")
    serve.proc.send_signal(signal.SIGTERM)
    serve._wait_for("kyma: shutting down|stopped PostgreSQL")
    for sig in (signal.SIGTERM, signal.SIGINT):
        if serve.proc.poll() is None:
            serve.proc.send_signal(sig)
    assert serve.proc.wait(timeout=60) == 0, "".join(serve.output)
    assert postmaster_pid(home) is None
