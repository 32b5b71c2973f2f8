"""The rows and queries the compaction tests share (in process and on Spark)."""

from __future__ import annotations

import json


def ingest(services, start: int, rows: int) -> None:  # type: ignore[no-untyped-def]
    body = "\n".join(
        json.dumps({"n": n, "host": f"h{n % 5}", "_timestamp": 1_700_000_000_000_000_000 + n})
        for n in range(start, start + rows)
    )
    services.write_path.ingest_ndjson("t", body.encode())


def answers(services) -> list:  # type: ignore[no-untyped-def]
    queries = [
        "SELECT n, host, _timestamp FROM t ORDER BY n",
        "SELECT host, count(*) AS c, sum(n) AS s FROM t GROUP BY host ORDER BY host",
        "SELECT count(*) AS c FROM t WHERE _timestamp > TIMESTAMP '2023-11-14T22:13:20.000005'",
    ]
    return [services.query.execute(q).table.to_pylist() for q in queries]
