"""The ``kyma`` command."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import NoReturn

from kyma import __version__
from kyma.engine.errors import KymaError
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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        settings = Settings.load()
        if args.command == "serve":
            return serve(settings)
        return maintenance(settings)
    except KymaError as e:
        print(f"kyma: {e}", file=sys.stderr)
        return 1


def maintenance(settings: Settings) -> int:
    from kyma.services import open_services

    with open_services(settings) as services:
        print(services.run_maintenance())
    return 0


def serve(settings: Settings) -> int:
    from waitress.server import create_server

    from kyma.server import create_app
    from kyma.services import open_services

    def stop(signum: int, _frame: object) -> NoReturn:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    with open_services(settings) as services:
        app = create_app(services)
        server = create_server(
            app, host=settings.http_host, port=settings.http_port, threads=settings.http_threads
        )
        stopping = threading.Event()
        threading.Thread(
            target=_maintenance_loop, args=(services, stopping), daemon=True, name="maintenance"
        ).start()
        print(f"kyma {__version__} serving", flush=True)
        print(f"  HTTP API      http://{settings.http_host}:{server.effective_port}", flush=True)
        print(f"  catalog       {_redact(services.catalog.url)}", flush=True)
        print(f"  object store  {services.store.url}", flush=True)
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            stopping.set()
            server.close()
            print("kyma: shutting down", flush=True)
    return 0


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
