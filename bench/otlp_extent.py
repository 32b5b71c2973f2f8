"""Benchmark: the extent write of one OTLP group commit, in process, by its size.

    python bench/otlp_extent.py [--records 64 640 2560] [--repeat 10] [--profile]

bench/otlp.py's SDK spans and log records, decoded by the compiled wire decoder into the
tables' batch (``Signal.read``) once; then that batch written as one Parquet extent (local
store, unsynced, as the write path stores it before its commit), the best CPU and wall ms of
``--repeat``. Sizes side by side show the fixed cost of an extent (the intercept) against the
per-record one: an OTLP group commit writes a few hundred records. ``--profile`` prints
cProfile's top entries of the write (by own time) for each signal and size.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import tempfile
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from otlp import make_logs, make_spans

from kyma.engine.format.choice import segment_format
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import arrow_schema
from kyma.ingest.otlp._signals import SIGNALS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, nargs="+", default=[64, 640, 2560])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"{platform.node()}; load {os.getloadavg()[0]:.1f}")
    fmt = segment_format()
    with tempfile.TemporaryDirectory() as root:
        store = LocalStore(Path(root))
        print("| signal | records | CPU ms an extent | wall ms | CPU µs a record |")
        print("|---|---|---|---|---|")
        for name, make, encode in (
            ("traces", make_spans, encode_spans),
            ("logs", make_logs, encode_logs),
        ):
            signal = SIGNALS[name]
            schema = arrow_schema(signal.columns)
            for records in args.records:
                body = encode(make(records)).SerializeToString()
                batch = signal.read(body).batch

                def write() -> None:
                    writer = fmt.start_extent(store, schema, "tables/1")  # noqa: B023
                    with writer:
                        writer.append(batch)  # noqa: B023
                        store.delete(writer.finish(synced=False).object_path)

                write()  # warm
                cpu = wall = float("inf")
                for _ in range(args.repeat):
                    start, started = time.process_time(), time.perf_counter()
                    write()
                    cpu = min(cpu, time.process_time() - start)
                    wall = min(wall, time.perf_counter() - started)
                each = cpu / records * 1e6
                print(f"| {name} | {records} | {cpu * 1e3:.1f} | {wall * 1e3:.1f} | {each:.0f} |")
                if args.profile:
                    profile = cProfile.Profile()
                    profile.runcall(lambda: [write() for _ in range(args.repeat)])
                    pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
