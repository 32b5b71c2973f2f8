"""A bounded load test on loopback: 50 clients mix keyed ingest and queries against a real
``kyma serve``; no answer is a 5xx and no acknowledged row is lost or doubled.

``KYMA_LOAD_TEST_SECONDS`` sets the duration: 10 s in the suite, a minute by ``make load``.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

from ops_helpers import metric, query, request, serve_on

CLIENTS = 50
SECONDS = float(os.environ.get("KYMA_LOAD_TEST_SECONDS", "10"))
QUERIES = (
    "SELECT count(*) AS n FROM load",
    "SELECT client, count(*) AS n, max(seq) AS s FROM load GROUP BY client ORDER BY client",
    "SELECT * FROM load WHERE client = 7 ORDER BY seq DESC LIMIT 10",
)


def test_mixed_ingest_and_queries_lose_nothing(catalog_url: str, tmp_path: Path) -> None:
    serve = serve_on(catalog_url, tmp_path / "home")
    statuses: Counter[int] = Counter()
    acked = [0] * CLIENTS
    failures: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def client(cid: int) -> None:
        rng = random.Random(cid)
        seq = 0
        while time.monotonic() < deadline:
            if rng.random() < 0.6:
                rows = rng.randint(1, 200)
                body = "".join(
                    json.dumps({"client": cid, "seq": seq, "row": r}) + "\n" for r in range(rows)
                ).encode()
                status, _, answer = request(
                    f"{serve.url}/v1/ingest/load", body, {"X-Idempotency-Key": f"c{cid}-{seq}"}
                )
                if status == 200:
                    ack = json.loads(answer)
                    acked[cid] += 0 if ack["replayed"] else ack["rows"]
                seq += 1
            else:
                status, _, answer = request(
                    f"{serve.url}/v1/query",
                    json.dumps({"sql": rng.choice(QUERIES)}).encode(),
                    {"Content-Type": "application/json"},
                )
            with lock:
                statuses[status] += 1
                if status != 200:
                    failures.append(f"{status}: {answer[:300]!r}")

    try:
        assert query(serve, "CREATE TABLE load (client long, seq long, row long)")[0] == 200
        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=SECONDS + 120)
        assert not any(t.is_alive() for t in threads), "a client hung"
        assert not [s for s in statuses if s >= 500], failures[:5]
        assert set(statuses) == {200}, (statuses, failures[:5])
        total = sum(acked)
        _, _, answer = query(
            serve,
            "SELECT sum(n) AS n, count(*) AS d FROM"
            " (SELECT client, seq, row, count(*) AS n FROM load GROUP BY 1, 2, 3) AS t",
        )
        assert answer.get("rows") == [[total, total]], (answer, total, statuses)
        text = request(f"{serve.url}/metrics")[2].decode()
        assert metric(text, "kyma_ingest_rows_total", path="rest") == total
    finally:
        assert serve.stop() == 0
