"""The in-process client: kyma's services on the embedded runtime, no server."""

from __future__ import annotations

import threading
from contextlib import ExitStack
from typing import Any

from kyma.engine.errors import KymaError
from kyma.engine.query import Caller
from kyma.repl.client import Answer, Client, QueryError
from kyma.settings import Settings


class EmbeddedClient(Client):
    """Starts the catalog and object store from ``settings``; stops them on ``close``.

    ``cancel`` (Ctrl-C) cancels the running statement as a timeout does: it stops within a
    fraction of a second, and the query log counts it ``cancelled``.
    """

    def __init__(self, settings: Settings) -> None:
        from kyma.services import open_services

        self._stack = ExitStack()
        # A kyma serve on the same home keeps its catalog Postgres when this session ends.
        self._services = self._stack.enter_context(open_services(settings, log=lambda _: None))
        self._cancel = threading.Event()

    def execute(self, sql: str) -> Answer:
        self._cancel = cancel = threading.Event()  # one per statement
        try:
            result = self._services.query.execute(sql, cancel=cancel, caller=Caller(client="repl"))
        except KymaError as e:
            raise QueryError(str(e)) from e
        except Exception as e:  # an engine bug: report it, keep the session
            raise QueryError(f"internal error: {type(e).__name__}: {e}") from e
        return Answer(result.table, result.status)

    def progress(self, sql: str) -> dict[str, Any] | None:
        running = self._services.query.running.visible(Caller(client="repl"))
        mine = [s.view() for s in running if s.sql == sql and s.caller.client == "repl"]
        return mine[-1] if mine else None

    def cancel(self) -> None:
        self._cancel.set()

    def close(self) -> None:
        self._stack.close()
