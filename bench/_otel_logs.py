"""OTel-shaped log rows for the ingest and query benchmarks, generated columnar.

1 000 services, severities, realistic message text (so token sets and ILIKE have work),
trace ids, durations, an 8-dimensional embedding and an attribute map with high-cardinality
values (``user.id``, ``url.path``) and a nested object (``client``). Time is ordered, so
extents written in arrival order cover narrow time ranges (as live ingest does).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SPAN_NS = 86_400_000_000_000  # one day
DIM = 8
VERBS = [
    "connect",
    "read",
    "write",
    "query",
    "publish",
    "render",
    "authorize",
    "charge",
    "resolve",
    "upload",
    "download",
    "refresh",
]
OBJECTS = [
    "database",
    "cache",
    "queue",
    "upstream",
    "session",
    "invoice",
    "bucket",
    "token",
    "profile",
    "cart",
    "index",
    "shard",
]
OUTCOMES = [
    "completed",
    "timeout",
    "refused",
    "retrying",
    "failed",
    "slow",
    "degraded",
    "succeeded",
    "throttled",
    "cancelled",
    "ok",
    "done",
]


def services() -> list[str]:
    return [f"svc-{i:04d}" for i in range(1000)]


def generate(rows: int, seed: int, offset: int = 0, total: int | None = None) -> pa.Table:
    """Rows ``offset .. offset+rows`` of a ``total``-row day of logs."""
    total = total or rows
    rng = np.random.default_rng(seed + offset)
    step = SPAN_NS // total
    ts = START_NS + (np.arange(offset, offset + rows, dtype=np.int64) * step)
    pick = lambda values, n: pa.array(values).take(pa.array(rng.integers(0, len(values), n)))  # noqa: E731
    message = pc.binary_join_element_wise(
        pick(VERBS, rows),
        pick(OBJECTS, rows),
        pick(OUTCOMES, rows),
        pa.array(np.char.add("after ", rng.integers(1, 5000, rows).astype(str))),
        pa.array(np.char.add("user u", rng.integers(0, 100_000, rows).astype(str))),
        " ",
    )
    embedding = rng.standard_normal((rows, DIM)).astype(np.float32)
    return pa.table(
        {
            "timestamp": pa.array(ts, pa.timestamp("ns", tz="UTC")),
            "service_name": pa.array(services()).take(pa.array(rng.integers(0, 1000, rows))),
            "severity": pick(["DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"], rows),
            "message": message,
            "trace_id": pa.array(np.char.mod("%016x", rng.integers(0, 2**62, rows))),
            "duration_ms": pa.array(rng.integers(0, 10_000, rows)),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(embedding.ravel()), DIM),
            "http_method": pick(["GET", "POST", "PUT", "DELETE"], rows),
            "http_status": pick([200, 200, 200, 201, 404, 500, 503], rows),
            "user_id": pa.array(np.char.add("user-", rng.integers(0, 1_000_000, rows).astype(str))),
            "url_path": pc.binary_join_element_wise(
                pa.array(np.full(rows, "/api/v1")),
                pick(OBJECTS, rows),
                pa.array(rng.integers(0, 10_000_000, rows).astype(str)),
                "/",
            ),
            "client_port": pa.array(rng.integers(1024, 65536, rows)),
        }
    )


def write_ndjson(table: pa.Table, path: Path) -> None:
    """kyma's NDJSON for a generated table (``_timestamp`` as epoch ns, attributes nested),
    written by DuckDB (fast, and independent of kyma)."""
    con = duckdb.connect()
    con.register("generated", table)
    con.execute(
        f"""COPY (SELECT epoch_ns(timestamp) AS _timestamp, service_name, severity, message,
                 trace_id, duration_ms, embedding::DOUBLE[] AS embedding,
                 {{'http.method': http_method, 'http.status_code': http_status,
                   'user.id': user_id, 'url.path': url_path,
                   'client': {{'address': '10.0.' || (client_port % 256) || '.'
                                || (client_port // 256), 'port': client_port}}}} AS attributes
              FROM generated) TO '{path}' (FORMAT JSON)"""
    )
    con.close()


def chunks(path: Path, lines_per_chunk: int) -> Iterator[bytes]:
    """The NDJSON file as bodies of ``lines_per_chunk`` lines."""
    with path.open("rb") as fh:
        while True:
            body = b"".join(itertools.islice(fh, lines_per_chunk))
            if not body:
                return
            yield body


KYMA_DDL = (
    "CREATE TABLE logs (service_name string, severity string, message string, trace_id string,"
    f" duration_ms long, embedding vector({DIM}), attributes dynamic)"
)
