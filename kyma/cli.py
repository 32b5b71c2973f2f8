"""The ``kyma`` command."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kyma import __version__, _home, _stacks
from kyma._signals import StopSignals
from kyma.engine.errors import KymaError, NotInstalledError
from kyma.logs import configure as configure_logging
from kyma.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kyma",
        description="SQL engine for event data that also federates and mirrors Postgres.",
        epilog=Settings.help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kyma {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    settings_help: dict[str, Any] = {
        "epilog": Settings.help_text(),
        "formatter_class": parser.formatter_class,
    }
    commands.add_parser(
        "serve", help="run the server (embedded catalog and store by default)", **settings_help
    )
    commands.add_parser(
        "maintenance",
        help="one round of retention, compaction, the ledger sweeper and orphan GC (JSON)",
        **settings_help,
    )
    consume = commands.add_parser(
        "kafka-consume",
        help="run Kafka sources in this process (every source if none named)",
        **settings_help,
    )
    consume.add_argument("--source", action="append", dest="sources", metavar="NAME")
    cdc = commands.add_parser(
        "cdc-sync",
        help="run Postgres CDC sync here (every sync connector if none named)",
        **settings_help,
    )
    cdc.add_argument("--connector", action="append", dest="connectors", metavar="NAME")
    compact_parser = commands.add_parser(
        "compact",
        help="merge small extents of the named tables (every table if none)",
        **settings_help,
    )
    compact_parser.add_argument("tables", nargs="*", metavar="TABLE")
    load_parser = commands.add_parser(
        "load",
        help="bulk-load files into a table with Spark (one snapshot; a re-run is a no-op)",
        **settings_help,
    )
    load_parser.add_argument("table")
    load_parser.add_argument("source", help="a file, folder or glob, or s3://bucket/prefix-or-glob")
    load_parser.add_argument("--format", choices=("ndjson", "csv", "parquet"))
    load_parser.add_argument(
        "--no-evolve", dest="schema_evolve", action="store_false", help="drop unknown fields"
    )
    _add_sql_parser(commands)
    _add_token_parser(commands)
    args = parser.parse_args(argv)
    _stacks.enlarge()  # before any statement starts DataFusion's threads
    if args.command == "sql":
        return sql(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = Settings.load()
        configure_logging(settings.log_format)
        if args.command == "serve":
            return serve(settings)
        if args.command == "kafka-consume":
            return kafka_consume(settings, args.sources)
        if args.command == "cdc-sync":
            return cdc_sync(settings, args.connectors)
        if args.command == "load":
            return load(settings, args)
        if args.command == "compact":
            return compact(settings, args.tables)
        if args.command == "token":
            return token(settings, args)
        return maintenance(settings)
    except KymaError as e:
        print(f"kyma: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:  # SIGTERM/SIGINT while starting: what started is stopped
        print(f"kyma: interrupted ({e or 'SIGINT'}) while starting", file=sys.stderr)
        return 130


def _add_sql_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("sql", help="a psql-style SQL terminal (embedded, or --url)")
    parser.add_argument("--url", help="a running kyma serve, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", help="bearer token sent to --url")
    parser.add_argument("--cacert", type=Path, help="trust this CA (PEM) for an https --url")
    once = parser.add_mutually_exclusive_group()
    once.add_argument("-c", dest="sql_text", metavar="SQL", help="run SQL, then exit")
    once.add_argument("-f", dest="file", type=Path, metavar="FILE", help="run FILE, then exit")
    parser.add_argument(
        "-A", dest="unaligned", action="store_true", help="unaligned output (a|b), as psql -A"
    )
    parser.add_argument(
        "-t", dest="tuples_only", action="store_true", help="rows only: no header, no footer"
    )
    parser.add_argument("--csv", dest="csv", action="store_true", help="CSV output, as psql --csv")


def sql(args: argparse.Namespace) -> int:
    """``kyma sql``: history in KYMA_HISTORY_FILE (default ~/.kyma_history), pager $PAGER
    (empty: none), NULL dimmed unless TERM=dumb or NO_COLOR is set."""
    from kyma.repl import shell
    from kyma.repl.client import Client, QueryError

    def connect() -> Client:
        if args.url:
            from kyma.repl.client.http import HttpClient

            return HttpClient(args.url, args.token, cacert=args.cacert)
        from kyma.repl.client.embedded import EmbeddedClient

        try:
            return EmbeddedClient(Settings.load())
        except KymaError as e:
            raise QueryError(str(e)) from e

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s %(message)s")
    history = os.environ.get("KYMA_HISTORY_FILE") or str(Path.home() / ".kyma_history")
    return shell.run(
        connect,
        args.url or "the embedded runtime",
        command=args.sql_text,
        file=args.file,
        history=Path(history),
        pager=os.environ.get("PAGER", "less -SR"),
        color=os.environ.get("TERM", "dumb") != "dumb" and "NO_COLOR" not in os.environ,
        output_format="csv" if args.csv else "unaligned" if args.unaligned else "aligned",
        tuples_only=args.tuples_only,
    )


def _add_token_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("token", help="create, list and revoke API tokens")
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a token and print it (shown only once)")
    create.add_argument(
        "--scope", action="append", required=True, choices=("read", "ingest", "admin")
    )
    create.add_argument(
        "--table", action="append", dest="tables", metavar="TABLE", help="limit to this table"
    )
    create.add_argument("--name", help="a label shown by kyma token list")
    actions.add_parser("list", help="list tokens (never the tokens themselves)")
    revoke = actions.add_parser("revoke", help="revoke a token: it is refused from now on")
    revoke.add_argument("id", type=int)


def token(settings: Settings, args: argparse.Namespace) -> int:
    """``kyma token``: against the catalog directly (the embedded one, or KYMA_CATALOG_URL)."""
    from kyma.auth import create_token
    from kyma.services import open_services

    log = _to_stderr
    with open_services(settings, log) as services:
        tokens = services.stores.tokens
        if args.action == "create":
            secret, record = create_token(tokens, args.scope, args.tables, args.name)
            grants = f" on {', '.join(record.tables)}" if record.tables else ""
            log(f"token {record.token_id}: {', '.join(record.scopes)}{grants} (shown only now)")
            print(secret)
        elif args.action == "revoke":
            print(f"token {tokens.revoke(args.id).token_id} revoked")
        else:
            print(f"{'id':>4}  {'scopes':<18} {'tables':<24} {'created':<20} {'revoked':<20} name")
            for r in tokens.list_all():
                print(
                    f"{r.token_id:>4}  {','.join(r.scopes):<18} {','.join(r.tables or ['*']):<24}"
                    f" {r.created_at:%Y-%m-%d %H:%M:%S}  "
                    f"{f'{r.revoked_at:%Y-%m-%d %H:%M:%S}' if r.revoked_at else '-':<20} "
                    f"{r.name or ''}"
                )
    return 0


def maintenance(settings: Settings) -> int:
    """One round, printed as one JSON object on stdout (what happened around it: stderr)."""
    from kyma.services import open_services

    with open_services(settings, _to_stderr) as services:
        print(json.dumps(services.run_maintenance()))
    return 0


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def compact(settings: Settings, tables: list[str]) -> int:
    """Compact the named tables (every table if none), printing what each gained."""
    from kyma.services import open_services

    with open_services(settings) as services:
        for table in tables or [t.name for t in services.catalog.list_tables()]:
            result = services.compact(table)
            print(
                f"{table}: {result.extents_in} extents -> {result.extents_out}"
                f" ({result.rows:,} rows, {result.bytes_in / 1e6:.1f} MB ->"
                f" {result.bytes_out / 1e6:.1f} MB)"
            )
    return 0


def load(settings: Settings, args: argparse.Namespace) -> int:
    """Run a bulk load to the end, showing its progress; a running serve's catalog is shared."""
    from kyma.ingest.load import LoadRequest
    from kyma.services import open_services

    request = LoadRequest(args.table, args.source, args.format, args.schema_evolve)
    with open_services(settings) as services:
        jobs = services.jobs
        job = jobs.submit_load(request)
        while job.state == "running":
            print(
                f"\r{_progress_line(job.progress.to_json())}", end="", file=sys.stderr, flush=True
            )
            time.sleep(0.5)
        print(f"\r{_progress_line(job.progress.to_json())}", file=sys.stderr)
        if job.state == "failed":
            print(f"kyma: load failed: {job.error}", file=sys.stderr)
            return 1
        result = job.result or {}
        verb = "already loaded (nothing written)" if result.get("replayed") else "loaded"
        print(
            f"{verb}: {result.get('rows')} rows into {args.table},"
            f" snapshot {result.get('snapshot_id')}"
        )
    return 0


def _progress_line(p: dict) -> str:  # type: ignore[type-arg]
    eta = "" if p["eta_seconds"] is None else f", ETA {p['eta_seconds']:.0f}s"
    rate = f", {p['bytes_per_second'] / 1e6:.1f} MB/s" if p["bytes_per_second"] else ""
    return (
        f"{p['phase']}: {p['files_done']}/{p['files_total']} files,"
        f" {p['rows_done']:,} rows, {p['bytes_done'] / 1e6:.0f}/{p['bytes_total'] / 1e6:.0f} MB"
        f"{rate}{eta}   "
    )


def _spark_target(services: Any) -> Any:
    """Where CDC snapshots of large tables run: the settings' Spark, writing to kyma's store."""
    from kyma.connectors.base import SparkTarget

    settings = services.settings
    return SparkTarget(
        services.jobs.store, settings.block_rows, settings.spark_master, settings.extent_format
    )


def cdc_sync(settings: Settings, names: list[str] | None) -> int:
    """Run CDC sync workers until SIGTERM/SIGINT (the same workers ``kyma serve`` runs)."""
    from kyma.services import open_services

    signals = StopSignals()
    with open_services(settings) as services:
        services.write_path.warm()
        started = services.connectors.sync.start(
            services.write_path,
            lambda q: services.query.execute(q).table,
            names,
            spark=_spark_target(services),
        )
        signals.serving()
        print(f"kyma cdc-sync: running {started}", flush=True)
        signals.wait()  # then leaving the block stops the workers
    return 0


def kafka_consume(settings: Settings, names: list[str] | None) -> int:
    """Run Kafka sources until SIGTERM/SIGINT; workers in several processes share partitions."""
    from kyma.services import open_services

    signals = StopSignals()
    with open_services(settings) as services:
        services.write_path.warm()
        services.sources.start(names, types=("kafka",))
        signals.serving()
        print(f"kyma kafka-consume: running {names or 'every source'}", flush=True)
        signals.wait()  # then leaving the block stops the workers
    return 0


def serve(settings: Settings) -> int:
    """Serve until SIGTERM/SIGINT, then stop every listener in order and exit 0."""
    from kyma.auth import check_listen, first_token
    from kyma.engine.query import Quarantine
    from kyma.flight import start_flight_server
    from kyma.ingest.listener import HttpListener
    from kyma.ingest.tls import read_pair, server_context
    from kyma.pgwire import start_pg_server
    from kyma.server import create_app
    from kyma.services import open_services

    check_listen(settings)  # before anything starts: a refusal costs nothing
    tls_files = _tls_files(settings)
    _home.secure(settings.home, logging.getLogger("kyma.serve").warning)
    signals = StopSignals()
    with open_services(settings, owner=True) as services, contextlib.ExitStack() as stack:
        quarantine = Quarantine(settings.home / "quarantine", settings.quarantine_seconds)
        services.query.quarantine = quarantine
        stack.callback(quarantine.close)  # the last step: what stopped running crashed nothing
        http = HttpListener(
            create_app(services),
            settings.http_host,
            settings.http_port,
            setting="KYMA_HTTP_PORT",
            threads=settings.http_threads,
            tls=tls_files,
            probes=frozenset({"/healthz", "/readyz"}),
        )
        stack.callback(http.stop)
        stack.callback(services.live.close)  # first: the live tails' streams end, then HTTP
        try:
            flight_server = start_flight_server(
                services,
                settings.http_host,
                settings.flight_port,
                read_pair(*tls_files) if tls_files else None,
            )
            stack.callback(flight_server.shutdown)
            flight = flight_server.url
        except NotInstalledError as e:  # serve without Flight rather than not at all
            flight = f"off: {e}"
        pg_server = None
        if settings.pg_port:
            pg_server = start_pg_server(
                services,
                settings.http_host,
                settings.pg_port,
                server_context(*tls_files) if tls_files else None,
            )
            stack.callback(pg_server.stop)
        try:
            otlp = _start_otlp(services)
            stack.callback(otlp.stop)
            otlp_lines = [
                f"OTLP/gRPC     {otlp.grpc_url} (OTLP)",
                f"OTLP/HTTP     {otlp.http_url} (OTLP)",
            ]
        except NotInstalledError as e:  # serve without OTLP rather than not at all
            otlp_lines = [f"OTLP          off: {e}"]
        services.write_path.warm()
        services.sources.start()
        services.connectors.sync.start(
            services.write_path,
            lambda q: services.query.execute(q).table,
            spark=_spark_target(services),
        )
        stopping = threading.Event()
        stack.callback(stopping.set)
        threading.Thread(
            target=_maintenance_loop, args=(services, stopping), daemon=True, name="maintenance"
        ).start()
        _start_compactor(services, stopping)
        signals.serving()  # from here a signal only ends wait(): shutdown runs in order, exit 0
        print(f"kyma {__version__} serving", flush=True)
        scheme = "https" if tls_files else "http"
        print(f"  HTTP API      {scheme}://{settings.http_host}:{http.port}", flush=True)
        print(f"  auth          {settings.auth}", flush=True)
        if settings.auth == "required" and (secret := first_token(services.stores.tokens)):
            print(
                f"  first token   {secret} (admin, named 'first'; printed only now: keep it,"
                " make others with `kyma token create`, revoke this one when done)",
                flush=True,
            )
        print(f"  Flight SQL    {flight}", flush=True)
        print(f"  Postgres      {pg_server.url if pg_server else 'off'}", flush=True)
        for line in otlp_lines:
            print(f"  {line}", flush=True)
        print(f"  catalog       {_redact(services.stores.db.url)}", flush=True)
        print(f"  object store  {services.store.url}", flush=True)
        print(f"kyma: shutting down ({signals.wait()})", flush=True)
    return 0


def _tls_files(settings: Settings) -> tuple[Path, Path] | None:
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    return settings.tls_cert_file, settings.tls_key_file


def _start_otlp(services):  # type: ignore[no-untyped-def]
    from kyma.auth import Authenticator
    from kyma.ingest.otlp import OtlpOptions, start_otlp_receiver

    settings = services.settings
    authenticator = Authenticator(services.stores.tokens, settings.auth)

    def authorize(authorization: str | None, table: str) -> None:
        authenticator.principal(authorization).require("ingest", [table])

    options = OtlpOptions(
        host=settings.http_host,
        grpc_port=settings.otlp_grpc_port,
        http_port=settings.otlp_http_port,
        tables={
            "logs": settings.otlp_logs_table,
            "traces": settings.otlp_traces_table,
            "metrics": settings.otlp_metrics_table,
        },
        batch_rows=settings.otlp_batch_rows,
        batch_bytes=settings.otlp_batch_bytes,
        batch_latency_ms=settings.otlp_batch_latency_ms,
        max_body_bytes=settings.max_body_bytes,
        threads=settings.http_threads,
        authorize=authorize if authenticator.required else None,
        tls=_tls_files(settings),
    )
    receiver = start_otlp_receiver(services.catalog, services.write_path, options)
    services.metrics.track_sources(receiver.metrics)
    return receiver


def _maintenance_loop(services, stopping: threading.Event) -> None:  # type: ignore[no-untyped-def]
    log = logging.getLogger("kyma.maintenance")
    while not stopping.wait(services.settings.maintenance_interval_seconds):
        try:
            log.info("maintenance: %s", services.run_maintenance())
        except KymaError as e:
            log.warning("maintenance failed, will retry: %s", e)


def _start_compactor(services, stopping: threading.Event) -> None:  # type: ignore[no-untyped-def]
    """Tables that receive rows compacted soon after (``kyma.compactor``), unless the interval
    is 0."""
    from functools import partial

    from kyma.compactor import Compactor

    interval = services.settings.compaction_interval_seconds
    if interval <= 0:
        return
    compactor = Compactor(partial(services.compact, tiered=True), interval)
    services.catalog.commit_listeners.append(compactor.observe)
    services.metrics.track_compaction(lambda: compactor.pending)
    threading.Thread(target=compactor.run, args=(stopping,), daemon=True, name="compactor").start()


def _redact(url: str) -> str:
    """A connection URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
