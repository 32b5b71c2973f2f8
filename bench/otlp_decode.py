"""Benchmark: an OTLP export's bytes → the Arrow batch kyma writes, in process, vs the parser.

    python bench/otlp_decode.py [--records 5120] [--batch 512] [--repeat 5]

bench/otlp.py's SDK spans and log records (6 attributes and an event a span, 4 attributes a
record) encoded by the SDK's exporter into requests of ``--batch``; the CPU µs a record, best
of ``--repeat``, of each request's bytes made into the table's batch by kyma (the compiled
wire decoder, ``Signal.read``), and the peer: protobuf's own parse of the same bytes into
messages (``FromString``, upb; what the bare sink of bench/otlp.py does before it answers).
With ``PYTHONPATH`` set to an earlier commit's package laid out as installed (as
``bench/otlp.py --baseline`` takes), run from outside the repository, it measures that
commit's path instead: protobuf's parse, then its Python converter.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from otlp import make_logs, make_spans

import kyma.ingest.otlp._signals as signals


def cpu_us(
    step: Callable[[bytes], object], bodies: list[bytes], records: int, repeat: int
) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for body in bodies:
            step(body)
        best = min(best, time.process_time() - start)
    return best / records * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=5_120)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"records={args.records:,} batch={args.batch}; {platform.node()}; kyma from"
        f" {signals.__file__}; load {os.getloadavg()[0]:.1f}"
    )
    made = {"traces": make_spans(args.records), "logs": make_logs(args.records)}
    encoders = {"traces": encode_spans, "logs": encode_logs}
    print("| signal | protobuf's parse µs a record | kyma: bytes → batch µs a record | ÷ parse |")
    print("|---|---|---|---|")
    for name, items in made.items():
        signal = signals.SIGNALS[name]
        bodies = [
            encoders[name](items[i : i + args.batch]).SerializeToString()
            for i in range(0, len(items), args.batch)
        ]
        parse = cpu_us(signal.request.FromString, bodies, len(items), args.repeat)
        if hasattr(signal, "read"):
            kyma = cpu_us(signal.read, bodies, len(items), args.repeat)
        else:  # an earlier commit: protobuf's parse, then the group's Python converter

            def converted(body: bytes, signal=signal) -> object:  # type: ignore[no-untyped-def]
                return signal.convert([signal.request.FromString(body)])

            kyma = cpu_us(converted, bodies, len(items), args.repeat)
        print(f"| {name} | {parse:.2f} | {kyma:.2f} | {kyma / parse:.2f}x |")


if __name__ == "__main__":
    main()
