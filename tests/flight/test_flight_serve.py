"""Flight SQL in a real ``kyma serve``: the banner names its URL, it answers beside the HTTP
API, and SIGTERM stops both."""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import urllib.request
from pathlib import Path

import adbc_driver_flightsql.dbapi
from serve_helpers import Serve


def test_kyma_serve_runs_flight_sql_beside_http() -> None:
    home = Path(tempfile.mkdtemp(prefix="kyma-flight-serve-", dir="/tmp"))  # postgres reaches it
    serve = Serve(home)
    try:
        assert serve.flight_url is not None and serve.flight_url.startswith("grpc://127.0.0.1:")
        assert serve.post("/v1/query", {"sql": "CREATE TABLE hits (n long)"})[0] == 200
        body = "\n".join(json.dumps({"n": i}) for i in range(100)).encode()
        with urllib.request.urlopen(f"{serve.url}/v1/ingest/hits", data=body, timeout=30) as ack:
            assert json.load(ack)["rows"] == 100
        with (
            adbc_driver_flightsql.dbapi.connect(serve.flight_url, autocommit=True) as conn,
            conn.cursor() as cur,
        ):
            cur.execute("SELECT sum(n) AS total FROM hits WHERE n >= ?", parameters=(50,))
            assert cur.fetchall() == [(sum(range(50, 100)),)]
    finally:
        code = serve.stop(signal.SIGTERM)
        shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)
    assert "kyma: shutting down" in "".join(serve.output)
