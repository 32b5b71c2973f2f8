"""The in-process client: kyma's services on the embedded runtime, no server."""

from __future__ import annotations

from contextlib import ExitStack

from kyma.engine.errors import KymaError
from kyma.repl.client import Answer, Client, QueryError
from kyma.settings import Settings


class EmbeddedClient(Client):
    """Starts the catalog and object store from ``settings``; stops them on ``close``.

    A cancelled query cannot be stopped inside the engine: its worker thread is abandoned.
    """

    def __init__(self, settings: Settings) -> None:
        from kyma.services import open_services

        self._stack = ExitStack()
        # A kyma serve on the same home keeps its catalog Postgres when this session ends.
        self._services = self._stack.enter_context(open_services(settings, log=lambda _: None))

    def execute(self, sql: str) -> Answer:
        try:
            result = self._services.query.execute(sql)
        except KymaError as e:
            raise QueryError(str(e)) from e
        except Exception as e:  # an engine bug: report it, keep the session
            raise QueryError(f"internal error: {type(e).__name__}: {e}") from e
        return Answer(result.table, result.status)

    def close(self) -> None:
        self._stack.close()
