"""Benchmark: the extent write alone (engine/format), in process, small and large batches.

    python bench/extent_write.py [--repeat 5]

The CPU milliseconds of ``start_extent`` + ``append`` + ``finish`` of one batch into a local
store (the Parquet format, its defaults), best of ``--repeat``: OTLP spans and log records
(bench/otlp.py's SDK data through kyma's own converter) of 8, 512 and 5 120 rows -- what a
commit costs whatever its rows shows at 8 -- a 50 000-line hits request and a 10 000-line
logs request (bench/ingest's data, coerced as the write path does). The peer, in the same
run: pyarrow writing the same batch as one zstd Parquet file (no statistics of kyma's, no
shredding, no token filters). To compare with another
commit, run it with ``PYTHONPATH`` set to that commit's package laid out as installed (as
``bench/otlp.py --baseline`` takes), from outside the repository.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _hits_ndjson
import pyarrow as pa
import pyarrow.parquet as pq
from _otel_logs import DIM, chunks, generate, write_ndjson
from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from otlp import make_logs, make_spans

from kyma.engine.format import ParsedDynamic
from kyma.engine.format.choice import segment_format
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import DEFAULT_COLUMNS, Column, KymaType
from kyma.ingest.coerce import coerce_ndjson
from kyma.ingest.otlp._signals import SIGNALS

LOG_COLUMNS = [
    *DEFAULT_COLUMNS,
    *(
        Column(name, KymaType.parse(kind))
        for name, kind in [
            ("service_name", "string"),
            ("severity", "string"),
            ("message", "string"),
            ("trace_id", "string"),
            ("duration_ms", "long"),
            ("embedding", f"vector({DIM})"),
            ("attributes", "dynamic"),
        ]
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kyma-bench-extent-"))
    store, fmt = LocalStore(work / "objects"), segment_format("parquet")
    cases = batches(work)
    whole = peer_batches(work)
    print(f"load {os.getloadavg()[0]:.1f}; CPU ms of one extent write, best of {args.repeat}")
    print(f"{'batch':28s} {'kyma':>8s} {'µs a row':>9s} {'pyarrow':>8s} {'ratio':>6s}")
    for label, batch, parsed in cases:
        best = _best(args.repeat, lambda b=batch, p=parsed: _write(store, fmt, b, p))
        table = pa.table(whole.get(label, batch))
        peer = _best(
            args.repeat,
            lambda t=table: pq.write_table(t, work / "peer.parquet", compression="zstd"),
        )
        print(
            f"{label:28s} {best * 1000:8.1f} {best * 1e6 / batch.num_rows:9.0f}"
            f" {peer * 1000:8.1f} {best / peer:5.1f}x"
        )


Case = tuple[str, pa.RecordBatch, dict[str, ParsedDynamic] | None]


def batches(work: Path) -> list[Case]:
    """The measured batches: (label, batch, parsed dynamic columns or None)."""
    signals = {s.name: s for s in SIGNALS.values()}
    spans, logs = make_spans(5_120), make_logs(5_120)
    cases: list[Case] = []
    for rows in (8, 512, 5_120):
        batch = signals["traces"].read(encode_spans(spans[:rows]).SerializeToString()).batch
        cases.append((f"{rows} spans", batch, None))
    for rows in (8, 512, 5_120):
        batch = signals["logs"].read(encode_logs(logs[:rows]).SerializeToString()).batch
        cases.append((f"{rows} OTLP log records", batch, None))
    hits = _hits_ndjson.generate(50_000).combine_chunks().to_batches()[0]
    cases.append(("50 000-line hits request", hits, None))
    # as the write path coerces it: the rows the parse vouches for hold no CBOR yet
    coerced = coerce_ndjson(_logs_body(work), LOG_COLUMNS, ingest_time_ns=0, deferred=True)
    cases.append(("10 000-line logs request", coerced.batch, dict(coerced.parsed)))
    return cases


def peer_batches(work: Path) -> dict[str, pa.RecordBatch]:
    """The peer's batch where it is not the measured one: pyarrow writes the logs request
    with every row's CBOR (``batches`` has written the body)."""
    whole = coerce_ndjson(_logs_body(work), LOG_COLUMNS, ingest_time_ns=0)
    return {"10 000-line logs request": whole.batch}


def _logs_body(work: Path) -> bytes:
    path = work / "logs.ndjson"
    if not path.exists():
        write_ndjson(generate(10_000, seed=11), path)
    return next(iter(chunks(path, 10_000)))


def _write(store: LocalStore, fmt, batch: pa.RecordBatch, parsed) -> None:  # type: ignore[no-untyped-def]
    writer = fmt.start_extent(store, batch.schema, "tables/1")
    writer.append(batch, parsed)
    store.delete(writer.finish(synced=False).object_path)


def _best(repeat: int, run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


if __name__ == "__main__":
    main()
