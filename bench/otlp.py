"""Benchmark: OTLP/gRPC ingest from the OpenTelemetry SDK's exporter, vs a bare OTLP sink.

    python bench/otlp.py [--spans 100000] [--logs 100000] [--clients 4] [--batch 512]
                         [--latency-ms 200 20] [--baseline DIR] [--repeat N]

The SDK makes ``--spans`` spans and ``--logs`` log records once, before anything is timed
(HTTP-server-shaped: 6 attributes and an event per span, 4 attributes per record). Then
``--clients`` threads, each with its own ``OTLPSpanExporter`` / ``OTLPLogExporter``, export
them in batches of ``--batch`` (the SDK's BatchSpanProcessor default is 512) as fast as
the answers come back. The peer is a bare OTLP/gRPC sink in a process of its own: the
generated TraceService/LogsService servicers, 8 threads, answering every Export at once.
kyma is a real ``kyma serve`` (embedded Postgres catalog, local store) at its defaults, or
once per ``--latency-ms`` given (``KYMA_OTLP_BATCH_LATENCY_MS``, the group commit's longest
wait): an export is answered only after the snapshot holding it is committed, and the rows
are counted in SQL afterwards. ``--baseline`` measures another kyma package too, and
``--repeat`` runs the sink, the baseline and kyma in turn that many times (best of each:
the machine may be shared). For each kyma it also prints the server process's CPU time per
span and per record (from /proc; the catalog's Postgres processes not included): on a
shared machine a steadier figure than the rates.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path

import grpc
from _harness import Server
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

ROUTES = [f"/api/v1/{name}/{{id}}" for name in ("cart", "orders", "users", "search", "items")]
RESOURCE = Resource.create({"service.name": "shop", "service.version": "1.4.2", "host": "vm-1"})


def make_spans(count: int) -> list:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("shop.http", "1.0")
    for i in range(count):
        with tracer.start_as_current_span(
            f"GET {ROUTES[i % 5]}",
            kind=SpanKind.SERVER,
            attributes={
                "http.method": ("GET", "POST")[i % 2],
                "http.route": ROUTES[i % 5],
                "http.status_code": 200 + (i % 7 == 0) * 300,
                "user.id": f"user-{i % 10_007}",
                "net.peer.ip": f"10.0.{i % 256}.{i % 199}",
                "duration.ms": (i % 1000) / 10,
            },
        ) as span:
            span.add_event("cache miss", {"cache.key": f"item:{i % 997}"})
    return list(exporter.get_finished_spans())


def make_logs(count: int) -> list:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("shop.http")
    for i in range(count):
        logger.emit(
            body=f"request to {ROUTES[i % 5]} took {(i % 1000) / 10} ms",
            severity_number=(SeverityNumber.INFO, SeverityNumber.WARN)[i % 2],
            severity_text=("INFO", "WARN")[i % 2],
            attributes={
                "http.method": ("GET", "POST")[i % 2],
                "user.id": f"user-{i % 10_007}",
                "attempt": i % 3,
                "cached": i % 5 == 0,
            },
        )
    return list(exporter.get_finished_logs())


def send(exporter_class: type, endpoint: str, items: list, clients: int, batch: int) -> float:
    """Seconds for ``clients`` exporters to export every item; asserts each export succeeded."""
    batches = [items[i : i + batch] for i in range(0, len(items), batch)]
    exporters = [
        exporter_class(endpoint=endpoint, insecure=True, timeout=60) for _ in range(clients)
    ]

    def run(client: int) -> None:
        for chunk in batches[client::clients]:
            result = exporters[client].export(chunk)
            assert result.name == "SUCCESS", result

    start = time.perf_counter()
    with futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(run, range(clients)))
    elapsed = time.perf_counter() - start
    for exporter in exporters:
        exporter.shutdown()
    return elapsed


class _Sink(trace_service_pb2_grpc.TraceServiceServicer, logs_service_pb2_grpc.LogsServiceServicer):
    def Export(self, request, context):  # noqa: N802  (the generated servicer's name)
        if isinstance(request, trace_service_pb2.ExportTraceServiceRequest):
            return trace_service_pb2.ExportTraceServiceResponse()
        return logs_service_pb2.ExportLogsServiceResponse()


def run_sink() -> None:
    """The peer: answer every Export at once; print the port, serve until killed."""
    server = grpc.server(futures.ThreadPoolExecutor(8))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Sink(), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Sink(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


def measure(
    endpoint: str, spans: list, logs: list, args: argparse.Namespace, pid: int | None = None
) -> dict:
    """Rates, and with ``pid`` (a kyma serve) its CPU time per span and per record in µs."""
    rates: dict[str, float] = {}
    for name, exporter, items in (
        ("spans", OTLPSpanExporter, spans),
        ("logs", OTLPLogExporter, logs),
    ):
        cpu = cpu_seconds(pid) if pid else 0.0
        rates[name] = len(items) / send(exporter, endpoint, items, args.clients, args.batch)
        if pid:
            rates[f"{name} cpu µs"] = (cpu_seconds(pid) - cpu) / len(items) * 1e6
    return rates


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--logs", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument(
        "--latency-ms",
        type=int,
        nargs="+",
        default=[],
        help="KYMA_OTLP_BATCH_LATENCY_MS values to run kyma at (default: once, at its default)",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        help="a folder holding another kyma package (e.g. an earlier commit's, laid out as"
        " installed) to measure at its own defaults in the same run; may be repeated",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds, interleaved; best of each")
    parser.add_argument("--sink", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sink:
        return run_sink()
    # `python -m kyma serve` puts its working directory first on sys.path: run from the
    # repository root it would import this tree's kyma/ whatever --baseline says.
    os.chdir(tempfile.gettempdir())
    for baseline in args.baseline:
        where = subprocess.run(
            [sys.executable, "-c", "import kyma.ingest.otlp as m; print(m.__file__)"],
            env={**os.environ, "PYTHONPATH": baseline},
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"baseline: {where.stdout.strip()}")
    print(
        f"spans={args.spans:,} logs={args.logs:,} clients={args.clients} batch={args.batch};"
        f" {platform.node()} {platform.machine()}; load {os.getloadavg()[0]:.1f}"
    )
    start = time.perf_counter()
    spans, logs = make_spans(args.spans), make_logs(args.logs)
    print(f"made them with the SDK in {time.perf_counter() - start:.1f}s")

    runs: dict[str, Callable[[], dict]] = {"bare OTLP/gRPC sink (no-op Export)": lambda: sink()}
    for baseline in args.baseline:
        label = f"baseline {baseline} (its defaults)"
        runs[label] = lambda baseline=baseline, label=label: measure_kyma(
            spans, logs, args, None, label, PYTHONPATH=baseline
        )
    for ms in args.latency_ms or [None]:
        label = "kyma serve (defaults)" if ms is None else f"kyma serve, {ms} ms batch latency"
        runs[label] = lambda ms=ms, label=label: measure_kyma(spans, logs, args, ms, label)

    def sink() -> dict:
        peer = subprocess.Popen(
            [sys.executable, __file__, "--sink"], stdout=subprocess.PIPE, text=True
        )
        try:
            return measure(f"http://127.0.0.1:{peer.stdout.readline().strip()}", spans, logs, args)
        finally:
            peer.kill()
            peer.wait()

    best: dict[str, dict] = {}
    for round_ in range(args.repeat):
        for label, run in runs.items():
            rates = run()
            print(
                f"round {round_ + 1}, {label}: {rates['spans']:,.0f} spans/s,"
                f" {rates['logs']:,.0f} records/s; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            if "spans cpu µs" in rates:
                print(
                    f"  server CPU: {rates['spans cpu µs']:.0f} µs a span,"
                    f" {rates['logs cpu µs']:.0f} µs a record"
                )
            kept = best.setdefault(label, rates)
            best[label] = {k: (min if "cpu" in k else max)(kept[k], rates[k]) for k in rates}
    print("| path | spans/s | log records/s | ÷ sink | server CPU µs a span, a record |")
    print("|---|---|---|---|---|")
    peer = next(iter(best.values()))
    for label, rates in best.items():
        ratio = f"{rates['spans'] / peer['spans']:.2f}x, {rates['logs'] / peer['logs']:.2f}x"
        cpu = f"{rates['spans cpu µs']:.0f}, {rates['logs cpu µs']:.0f}" if len(rates) > 2 else ""
        print(f"| {label} | {rates['spans']:,.0f} | {rates['logs']:,.0f} | {ratio} | {cpu} |")


def measure_kyma(
    spans: list,
    logs: list,
    args: argparse.Namespace,
    latency_ms: int | None,
    label: str,
    **env: str,
) -> dict:
    """Rates into a fresh ``kyma serve`` whose group commits wait up to ``latency_ms``
    (None: its default)."""
    if latency_ms is not None:
        env["KYMA_OTLP_BATCH_LATENCY_MS"] = str(latency_ms)
    server = Server(**env)
    try:
        endpoint = server.otlp_grpc_url.replace("grpc://", "http://")
        rates = measure(endpoint, spans, logs, args, server.proc.pid)
        for table, sent in (("otel_traces", len(spans)), ("otel_logs", len(logs))):
            answer = server.sql(f"SELECT count(*) FROM {table}")
            rows, extents = answer["rows"][0][0], answer["stats"]["extents_total"]
            assert rows == sent, f"{table} has {rows} rows of {sent}"
            print(f"{label}: {table} has {rows:,} rows in {extents} extents")
    finally:
        server.stop()
    return rates


if __name__ == "__main__":
    main()
