"""The ``kyma`` command."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

from kyma import __version__
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
    commands.add_parser("serve", help="run the server (embedded catalog and store by default)")
    commands.add_parser("maintenance", help="sweep the ingest ledger and delete orphan objects")
    consume = commands.add_parser(
        "kafka-consume", help="run Kafka sources in this process (every source if none named)"
    )
    consume.add_argument("--source", action="append", dest="sources", metavar="NAME")
    cdc = commands.add_parser(
        "cdc-sync", help="run Postgres CDC sync here (every sync connector if none named)"
    )
    cdc.add_argument("--connector", action="append", dest="connectors", metavar="NAME")
    compact_parser = commands.add_parser(
        "compact", help="merge small extents of the named tables (every table if none)"
    )
    compact_parser.add_argument("tables", nargs="*", metavar="TABLE")
    load_parser = commands.add_parser(
        "load", help="bulk-load files into a table with Spark (one snapshot; a re-run is a no-op)"
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


def _add_sql_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("sql", help="a psql-style SQL terminal (embedded, or --url)")
    parser.add_argument("--url", help="a running kyma serve, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", help="bearer token sent to --url")
    parser.add_argument("--cacert", type=Path, help="trust this CA (PEM) for an https --url")
    parser.add_argument("-c", dest="sql_text", metavar="SQL", help="run SQL, then exit")
    parser.add_argument("-f", dest="file", type=Path, metavar="FILE", help="run FILE, then exit")


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
        pager=os.environ.get("PAGER", "less -S"),
        color=os.environ.get("TERM", "dumb") != "dumb" and "NO_COLOR" not in os.environ,
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

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    with open_services(settings, log, keep_adopted=True) as services:
        catalog = services.catalog
        if args.action == "create":
            secret, record = create_token(catalog, args.scope, args.tables, args.name)
            grants = f" on {', '.join(record.tables)}" if record.tables else ""
            log(f"token {record.token_id}: {', '.join(record.scopes)}{grants} (shown only now)")
            print(secret)
        elif args.action == "revoke":
            print(f"token {catalog.revoke_token(args.id).token_id} revoked")
        else:
            print(f"{'id':>4}  {'scopes':<18} {'tables':<24} {'created':<20} {'revoked':<20} name")
            for r in catalog.list_tokens():
                print(
                    f"{r.token_id:>4}  {','.join(r.scopes):<18} {','.join(r.tables or ['*']):<24}"
                    f" {r.created_at:%Y-%m-%d %H:%M:%S}  "
                    f"{f'{r.revoked_at:%Y-%m-%d %H:%M:%S}' if r.revoked_at else '-':<20} "
                    f"{r.name or ''}"
                )
    return 0


def maintenance(settings: Settings) -> int:
    from kyma.services import open_services

    with open_services(settings) as services:
        print(services.run_maintenance())
    return 0


def compact(settings: Settings, tables: list[str]) -> int:
    """Compact the named tables (every table if none), printing what each gained."""
    from kyma.services import open_services

    with open_services(settings, keep_adopted=True) as services:
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
    with open_services(settings, keep_adopted=True) as services:
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
    return (
        f"{p['phase']}: {p['files_done']}/{p['files_total']} files,"
        f" {p['rows_done']:,} rows, {p['bytes_done'] / 1e6:.0f}/{p['bytes_total'] / 1e6:.0f} MB"
        f"{eta}   "
    )


def _spark_target(services: Any) -> Any:
    """Where CDC snapshots of large tables run: the settings' Spark, writing to kyma's store."""
    from kyma.connectors.postgres.cdc import SparkTarget

    settings = services.settings
    return SparkTarget(
        services.jobs.store, settings.block_rows, settings.spark_master, settings.extent_format
    )


def cdc_sync(settings: Settings, names: list[str] | None) -> int:
    """Run CDC sync workers until SIGTERM/SIGINT (the same workers ``kyma serve`` runs)."""
    from kyma.services import open_services

    def stop(signum: int, _frame: object) -> NoReturn:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    with open_services(settings) as services:
        started = services.connectors.sync.start(
            services.write_path,
            lambda q: services.query.execute(q).table,
            names,
            spark=_spark_target(services),
        )
        print(f"kyma cdc-sync: running {started}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # SIGTERM/SIGINT: stop the workers
            threading.Event().wait()
    return 0


def kafka_consume(settings: Settings, names: list[str] | None) -> int:
    """Run Kafka sources until SIGTERM/SIGINT; workers in several processes share partitions."""
    from kyma.services import open_services

    def stop(signum: int, _frame: object) -> NoReturn:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    with open_services(settings) as services:
        services.sources.start(names, types=("kafka",))
        print(f"kyma kafka-consume: running {names or 'every source'}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # SIGTERM/SIGINT: stop the workers
            threading.Event().wait()
    return 0


def serve(settings: Settings) -> int:
    from waitress.server import create_server

    from kyma.auth import check_listen
    from kyma.flight import start_flight_server
    from kyma.ingest.tls import read_pair, serve_tls, server_context
    from kyma.server import create_app
    from kyma.services import open_services

    def stop(signum: int, _frame: object) -> NoReturn:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    check_listen(settings)  # before anything starts: a refusal costs nothing
    tls_files = _tls_files(settings)
    signal.signal(signal.SIGTERM, stop)
    with open_services(settings) as services:
        app = create_app(services)
        server = create_server(
            app, host=settings.http_host, port=settings.http_port, threads=settings.http_threads
        )
        if tls_files is not None:
            serve_tls(server, server_context(*tls_files))
        try:
            flight_server = start_flight_server(
                services,
                settings.http_host,
                settings.flight_port,
                read_pair(*tls_files) if tls_files else None,
            )
            flight = flight_server.url
        except NotInstalledError as e:  # serve without Flight rather than not at all
            flight_server, flight = None, f"off: {e}"
        try:
            otlp = _start_otlp(services)
            otlp_lines = [
                f"OTLP/gRPC     {otlp.grpc_url} (OTLP)",
                f"OTLP/HTTP     {otlp.http_url} (OTLP)",
            ]
        except NotInstalledError as e:  # serve without OTLP rather than not at all
            otlp, otlp_lines = None, [f"OTLP          off: {e}"]
        services.sources.start()
        services.connectors.sync.start(
            services.write_path,
            lambda q: services.query.execute(q).table,
            spark=_spark_target(services),
        )
        stopping = threading.Event()
        threading.Thread(
            target=_maintenance_loop, args=(services, stopping), daemon=True, name="maintenance"
        ).start()
        print(f"kyma {__version__} serving", flush=True)
        scheme = "https" if tls_files else "http"
        print(
            f"  HTTP API      {scheme}://{settings.http_host}:{server.effective_port}", flush=True
        )
        print(f"  auth          {settings.auth}", flush=True)
        print(f"  Flight SQL    {flight}", flush=True)
        for line in otlp_lines:
            print(f"  {line}", flush=True)
        print(f"  catalog       {_redact(services.catalog.url)}", flush=True)
        print(f"  object store  {services.store.url}", flush=True)
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            stopping.set()
            server.close()
            if flight_server is not None:
                flight_server.shutdown()
            if otlp is not None:
                otlp.stop()
            print("kyma: shutting down", flush=True)
    return 0


def _tls_files(settings: Settings) -> tuple[Path, Path] | None:
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    return settings.tls_cert_file, settings.tls_key_file


def _start_otlp(services):  # type: ignore[no-untyped-def]
    from kyma.auth import Authenticator
    from kyma.ingest.otlp import OtlpOptions, start_otlp_receiver

    settings = services.settings
    authenticator = Authenticator(services.catalog, settings.auth)

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
        batch_latency_ms=settings.otlp_batch_latency_ms,
        max_body_bytes=settings.max_body_bytes,
        threads=settings.http_threads,
        authorize=authorize if authenticator.required else None,
        tls=_tls_files(settings),
    )
    return start_otlp_receiver(services.catalog, services.write_path, options)


def _maintenance_loop(services, stopping: threading.Event) -> None:  # type: ignore[no-untyped-def]
    log = logging.getLogger("kyma.maintenance")
    while not stopping.wait(services.settings.maintenance_interval_seconds):
        try:
            log.info("maintenance: %s", services.run_maintenance())
        except KymaError as e:
            log.warning("maintenance failed, will retry: %s", e)


def _redact(url: str) -> str:
    """A connection URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
