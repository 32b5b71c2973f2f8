"""Log lines: text, or one JSON object a line (``KYMA_LOG_FORMAT=json``).

Every line logged while a request runs carries its request id (``request_id``), also
from the threads the request hands work to (query statements copy the context).
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kyma.engine.errors import ConfigError

if TYPE_CHECKING:
    from kyma.engine.query import QueryEvent

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kyma_request_id", default=None
)
FORMATS = ("text", "json")


class _RequestId(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", "request_id"?, "exception"?}`` a line."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid is not None:
            line["request_id"] = rid
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(log_format: str) -> None:
    """Give the root logger's handlers the format and the request-id filter."""
    if log_format not in FORMATS:
        raise ConfigError(f"KYMA_LOG_FORMAT: expected one of {FORMATS}, got {log_format!r}")
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.INFO)
    for handler in root.handlers:
        handler.addFilter(_RequestId())
        if log_format == "json":
            handler.setFormatter(JsonFormatter())


_query_log = logging.getLogger("kyma.query")


def log_query(event: QueryEvent) -> None:
    """One line per statement (HTTP, Flight SQL, embedded): its outcome, time and rows or error.

    ``query ok 3.1 ms 42 rows``, ``query error 0.4 ms sql_error``; never the statement text,
    which may hold a connector's password.
    """
    detail = f"{event.rows} rows" if event.outcome == "ok" else event.error or ""
    _query_log.info("query %s %.1f ms %s", event.outcome, event.seconds * 1000, detail)
