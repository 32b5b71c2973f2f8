"""What a connection answers itself: session settings (SET/SHOW/RESET), transaction
statements (no-ops for reads) and the server functions drivers call on connect.

``Session.answer(sql)`` returns a result, or None for a statement the query engine runs.
"""

from __future__ import annotations

import re

import pyarrow as pa

from kyma import __version__
from kyma.engine.errors import SqlError, TransactionAbortedError
from kyma.engine.query import QueryResult

SERVER_VERSION = "15.0"
VERSION = f"PostgreSQL {SERVER_VERSION} (kyma {__version__})"  # version()
# name → default; REPORTED ones go to the client as ParameterStatus at start and on SET.
DEFAULTS = {
    "server_version": SERVER_VERSION,
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY",
    "IntervalStyle": "postgres",
    "TimeZone": "UTC",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "is_superuser": "off",
    "application_name": "",
    "session_authorization": "",
    "extra_float_digits": "1",
    "search_path": "public",
    "statement_timeout": "0",
    "lock_timeout": "0",
    "idle_in_transaction_session_timeout": "0",
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "transaction_read_only": "off",
    "default_transaction_read_only": "off",
    "bytea_output": "hex",
    "max_identifier_length": "63",
    "jit": "off",
}
REPORTED = (
    "server_version",
    "server_encoding",
    "client_encoding",
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "integer_datetimes",
    "standard_conforming_strings",
    "is_superuser",
    "application_name",
    "session_authorization",
)
_CANONICAL = {name.lower(): name for name in DEFAULTS}
_TX = {
    "begin": "BEGIN",
    "start": "BEGIN",
    "commit": "COMMIT",
    "end": "COMMIT",
    "rollback": "ROLLBACK",
    "abort": "ROLLBACK",
}
_SET = re.compile(
    r"set\s+(?:session\s+|local\s+)?(?P<name>[\w.]+)\s*(?:=|\s+to\s+|\s+)(?P<value>.+)",
    re.I | re.S,
)
_SET_TIME_ZONE = re.compile(
    r"set\s+(?:session\s+|local\s+)?time\s+zone\s+(?P<value>.+)", re.I | re.S
)
_SHOW = re.compile(r"show\s+(?P<name>[\w.]+|time\s+zone|transaction\s+isolation\s+level)", re.I)
_FUNCTION = re.compile(
    r"select\s+(?:pg_catalog\.)?(?P<fn>version|current_schema|current_database|current_user"
    r"|session_user|current_role|pg_backend_pid)\s*(?:\(\s*\))?(?:\s+as\s+(?P<alias>\w+))?",
    re.I,
)
_CONFIG_CALL = (
    r"(?:current_setting\s*\(\s*'(?P<get>[\w.]+)'\s*\)"
    r"|set_config\s*\(\s*'(?P<set>[\w.]+)'\s*,\s*'(?P<value>[^']*)'\s*,\s*\w+\s*\))"
    r"(?:\s+as\s+(?P<alias>\w+))?"
)
_UNNAMED = re.sub(r"\?P<\w+>", "?:", _CONFIG_CALL)
_CONFIG_SELECT = re.compile(rf"select\s+{_UNNAMED}(?:\s*,\s*{_UNNAMED})*", re.I)
_CONFIG_ITEM = re.compile(_CONFIG_CALL, re.I)

_SHOW_COLUMNS = re.compile(
    r"\s*show\s+(?:full\s+)?columns\s+(?:from|in)\s+(?P<table>[\w.\"]+)\s*;?\s*", re.I
)


def translate(sql: str) -> str:
    """Statements clients send that kyma spells differently: ``SHOW COLUMNS FROM t`` is
    ``DESCRIBE t``.

    >>> translate("show columns from events;"), translate("SELECT 1")
    ('DESCRIBE events', 'SELECT 1')
    """
    if match := _SHOW_COLUMNS.fullmatch(sql):
        return f"DESCRIBE {match.group('table')}"
    return sql


class Session:
    """One connection's settings and transaction state."""

    def __init__(self, user: str, database: str, pid: int, startup: dict[str, str]) -> None:
        self.settings = dict(DEFAULTS)
        self.user, self.database, self.pid = user, database, pid
        for name, value in startup.items():
            if name.lower() in _CANONICAL:
                self.settings[_CANONICAL[name.lower()]] = value
        self.in_transaction = False
        self.failed = False
        self.changed: list[str] = []  # reported settings a SET changed, for ParameterStatus

    @property
    def status(self) -> bytes:
        """The ReadyForQuery transaction status: idle, in a transaction, or in a failed one."""
        if not self.in_transaction:
            return b"I"
        return b"E" if self.failed else b"T"

    def answer(self, sql: str) -> QueryResult | None:
        text = sql.strip().rstrip(";").strip()
        first = text.split(None, 1)[0].lower() if text else ""
        if first in _TX:
            return self._transaction(_TX[first], text)
        if self.failed:
            raise TransactionAbortedError(
                "current transaction is aborted, commands ignored until end of transaction block"
            )
        if first in ("set", "reset"):
            return self._set(text)
        if first == "discard" or first == "deallocate":
            return QueryResult.status_only(first.upper())
        if first == "show" and (match := _SHOW.fullmatch(text)):
            name = " ".join(match.group("name").lower().split())
            name = {
                "time zone": "timezone",
                "transaction isolation level": "transaction_isolation",
            }.get(name, name)
            if name in _CANONICAL:
                return _one(name, self.settings[_CANONICAL[name]])
        if first == "select" and (match := _FUNCTION.fullmatch(text)):
            return self._function(match.group("fn").lower(), match.group("alias"))
        if first == "select" and _CONFIG_SELECT.fullmatch(text):
            return self._config(text)
        return None

    def _config(self, text: str) -> QueryResult:
        """``SELECT current_setting('name'), set_config('name', 'value', is_local)``."""
        columns: dict[str, pa.Array] = {}
        for item in _CONFIG_ITEM.finditer(text):
            if item.group("set"):
                name = item.group("set")
                self._assign(_CANONICAL.get(name.lower(), name), item.group("value"))
                label = "set_config"
            else:
                name, label = item.group("get"), "current_setting"
            canonical = _CANONICAL.get(name.lower(), name)
            if canonical not in self.settings:
                raise SqlError(f"unrecognized configuration parameter {name!r}")
            value = self.settings[canonical]
            columns[item.group("alias") or label] = pa.array([value], pa.string())
        return QueryResult(pa.table(columns), "OK")

    def _transaction(self, tag: str, text: str) -> QueryResult:
        if tag == "BEGIN":
            self.in_transaction = True
        else:
            if tag == "COMMIT" and self.failed:
                tag = "ROLLBACK"  # as Postgres answers COMMIT of a failed transaction
            self.in_transaction = self.failed = False
        return QueryResult.status_only(tag)

    def _set(self, text: str) -> QueryResult:
        lowered = " ".join(text.lower().split())
        if lowered.startswith("set session characteristics") or lowered.startswith(
            "set transaction"
        ):
            return QueryResult.status_only("SET")
        if lowered.startswith("reset"):
            name = lowered.split(None, 1)[1] if " " in lowered else ""
            if name == "all":
                self.settings = dict(DEFAULTS)
            elif name in _CANONICAL:
                self._assign(_CANONICAL[name], DEFAULTS[_CANONICAL[name]])
            return QueryResult.status_only("RESET")
        if match := _SET_TIME_ZONE.fullmatch(text):
            name, value = "timezone", match.group("value")
        elif match := _SET.fullmatch(text):
            name, value = match.group("name").lower(), match.group("value")
        else:
            raise SqlError(f"cannot read SET statement {text!r}: expected SET name = value")
        value = value.strip().strip("'\"")
        if name not in _CANONICAL and "." not in name:
            raise SqlError(f"unrecognized configuration parameter {name!r}")
        if name == "client_encoding" and value.upper().replace("-", "") not in ("UTF8", "UNICODE"):
            raise SqlError(f"client_encoding: kyma speaks only UTF8, not {value!r}")
        self._assign(_CANONICAL.get(name, name), value)
        return QueryResult.status_only("SET")

    def _assign(self, name: str, value: str) -> None:
        self.settings[name] = value
        if name in REPORTED:
            self.changed.append(name)

    def _function(self, fn: str, alias: str | None) -> QueryResult:
        values = {
            "version": VERSION,
            "current_schema": "public",
            "current_database": self.database,
            "current_user": self.user,
            "session_user": self.user,
            "current_role": self.user,
        }
        if fn == "pg_backend_pid":
            return QueryResult(pa.table({alias or fn: pa.array([self.pid], pa.int32())}), "OK")
        return _one(alias or fn, values[fn])


def _one(name: str, value: str) -> QueryResult:
    return QueryResult(pa.table({name: pa.array([value], pa.string())}), "OK")
