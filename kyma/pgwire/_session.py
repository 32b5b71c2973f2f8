"""What a connection answers itself: session settings (SET/SHOW/RESET), transaction
statements and savepoints (``_transaction``), SQL prepared statements (``_prepared_sql``) and
the server functions drivers call on connect.

``Session.answer(sql)`` returns a result, or None for a statement the query engine runs.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from kyma import __version__
from kyma.engine.errors import (
    ReadOnlySettingError,
    SqlError,
    TransactionAbortedError,
    UnknownSettingError,
    UnsupportedStatementError,
)
from kyma.engine.query import QueryResult, parse_statement
from kyma.engine.query.dialect import Deallocate, ExecutePrepared, Kyma, Prepare, Savepoint
from kyma.engine.query.durations import milliseconds, shown
from kyma.pgwire._prepared_sql import PreparedStatements
from kyma.pgwire._session_sql import (
    ConfigCall,
    read_set,
    read_show,
    session_select,
    show_columns_table,
)
from kyma.pgwire._transaction import Transaction

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
    "idle_session_timeout": "0",
    "transaction_isolation": "read committed",
    "default_transaction_isolation": "read committed",
    "transaction_read_only": "off",
    "default_transaction_read_only": "off",
    "bytea_output": "hex",
    "max_identifier_length": "63",
    "jit": "off",
    "default_table_access_method": "heap",
    "max_index_keys": "32",
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
# time-valued: read in any unit Postgres takes, shown as it shows them
TIMES = (
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
    "idle_session_timeout",
)
READ_ONLY = ("server_version", "server_encoding", "integer_datetimes", "max_identifier_length")
_CANONICAL = {name.lower(): name for name in DEFAULTS}
_BEGIN = ("begin", "start")
_COMMIT = ("commit", "end")
_PARSED = ("rollback", "abort", "savepoint", "release")  # read by kyma's dialect
_KYMA_SHOWS = ("tables", "connectors", "sources", "columns", "full")  # the engine's SHOWs


def translate(sql: str) -> str:
    """Statements clients send that kyma spells differently: ``SHOW COLUMNS FROM t`` is
    ``DESCRIBE t``.

    >>> translate("show columns from events;"), translate("SELECT 1")
    ('DESCRIBE events', 'SELECT 1')
    """
    table = show_columns_table(sql.strip()) if sql.lstrip()[:4].lower() == "show" else None
    return f"DESCRIBE {table}" if table is not None else sql


class Session:
    """One connection's settings and transaction state."""

    def __init__(
        self,
        user: str,
        database: str,
        pid: int,
        startup: dict[str, str],
        protocol_statements: MutableMapping[str, Any] | None = None,
    ) -> None:
        """``protocol_statements``: the connection's named statements (Parse), whose names
        SQL prepared statements share."""
        self.user, self.database, self.pid = user, database, pid
        self.defaults = dict(DEFAULTS)  # what RESET goes back to: the start-up's values too
        for name, value in startup.items():
            if name.lower() in _CANONICAL:
                canonical = _CANONICAL[name.lower()]
                self.defaults[canonical] = _normalized(canonical, value)
        self.settings = dict(self.defaults)
        self.changed: list[str] = []  # reported settings a SET changed, for ParameterStatus
        self.transaction = Transaction(self.settings, self._restore)
        self.prepared = PreparedStatements(
            {} if protocol_statements is None else protocol_statements
        )

    @property
    def in_transaction(self) -> bool:
        return self.transaction.active

    @property
    def failed(self) -> bool:
        return self.transaction.failed

    @failed.setter
    def failed(self, value: bool) -> None:
        self.transaction.failed = value

    @property
    def status(self) -> bytes:
        """The ReadyForQuery transaction status: idle, in a transaction, or in a failed one."""
        if not self.in_transaction:
            return b"I"
        return b"E" if self.failed else b"T"

    def seconds(self, name: str) -> float:
        """A time setting (``statement_timeout``…) in seconds; 0: off."""
        return milliseconds(name, self.settings[name]) / 1000

    def expand(self, sql: str) -> str:
        """``EXECUTE name (…)`` as the statement it runs; any other statement as it is."""
        text = sql.strip().rstrip(";").strip()
        if not text or text.split(None, 1)[0].lower() != "execute":
            return sql
        self._check_not_failed()
        stmt = parse_statement(text)
        if not isinstance(stmt, ExecutePrepared):
            raise UnsupportedStatementError(f"cannot run {text!r} as EXECUTE")
        return self.prepared.bound(stmt)

    def _check_not_failed(self) -> None:
        if self.failed:
            raise TransactionAbortedError(
                "current transaction is aborted, commands ignored until end of transaction block"
            )

    def answer(self, sql: str) -> QueryResult | None:
        text = sql.strip().rstrip(";").strip()
        first = text.split(None, 1)[0].lower() if text else ""
        if first in _BEGIN:
            self.transaction.begin()
            return QueryResult.status_only("BEGIN")
        if first in _COMMIT:
            return QueryResult.status_only(self.transaction.end(commit=True))
        if first in _PARSED:
            return self._parsed(text)
        self._check_not_failed()
        if first in ("set", "reset"):
            return self._set(text)
        if first in ("prepare", "deallocate"):
            stmt = parse_statement(text)
            if isinstance(stmt, Prepare):
                return self.prepared.prepare(stmt)
            if isinstance(stmt, Deallocate):
                return self.prepared.deallocate(stmt)
        if first == "discard":
            return QueryResult.status_only("DISCARD")
        if first == "show" and (name := read_show(text)) is not None:
            if name == "all":
                return self._show_all()
            if name in _CANONICAL:
                return _one(name, self.settings[_CANONICAL[name]])
            if name in self.settings:  # a custom setting (myapp.tenant)
                return _one(name, self.settings[name])
            if name not in _KYMA_SHOWS:
                raise UnknownSettingError(f"unrecognized configuration parameter {name!r}")
        if first == "select":
            function, calls = session_select(text)
            if function is not None:
                return self._function(*function)
            if calls is not None:
                return self._config(calls)
        return None

    def _parsed(self, text: str) -> QueryResult:
        """ROLLBACK [TO SAVEPOINT], ABORT, SAVEPOINT and RELEASE, as kyma's dialect reads them."""
        stmt = sqlglot.parse_one(text, read=Kyma)
        transaction = self.transaction
        if isinstance(stmt, Savepoint):
            if stmt.args.get("release"):
                transaction.release(stmt.name)
                return QueryResult.status_only("RELEASE")
            transaction.savepoint(stmt.name)
            return QueryResult.status_only("SAVEPOINT")
        if isinstance(stmt, exp.Rollback) and stmt.args.get("savepoint"):
            transaction.rollback_to(stmt.args["savepoint"].name)
            return QueryResult.status_only("ROLLBACK")
        if isinstance(stmt, exp.Rollback):
            return QueryResult.status_only(transaction.end(commit=False))
        raise UnsupportedStatementError(f"cannot run {text!r} as a transaction statement")

    def ran(self, result: QueryResult) -> None:
        """The engine ran a statement of this session: one that answers no columns (INSERT,
        DDL) wrote, as far as a savepoint can tell."""
        self.transaction.ran(result.table.num_columns == 0)

    def _show_all(self) -> QueryResult:
        names = sorted(self.settings, key=str.lower)
        return QueryResult(
            pa.table(
                {
                    "name": pa.array(names, pa.string()),
                    "setting": pa.array([self.settings[n] for n in names], pa.string()),
                    "description": pa.array([""] * len(names), pa.string()),
                }
            ),
            "SHOW",
        )

    def _config(self, calls: Sequence[ConfigCall]) -> QueryResult:
        """``SELECT current_setting('name'), set_config('name', 'value', is_local)``."""
        columns: dict[str, pa.Array] = {}
        for call in calls:
            name = call.name
            canonical = _CANONICAL.get(name.lower(), name)
            if call.value is not None:
                self._assign(canonical, _normalized(canonical, call.value))
            if canonical not in self.settings:
                raise UnknownSettingError(f"unrecognized configuration parameter {name!r}")
            label = "current_setting" if call.value is None else "set_config"
            columns[call.alias or label] = pa.array([self.settings[canonical]], pa.string())
        return QueryResult(pa.table(columns), "OK")

    def _set(self, text: str) -> QueryResult:
        lowered = " ".join(text.lower().split())
        if lowered.startswith("set session characteristics") or lowered.startswith(
            "set transaction"
        ):
            return QueryResult.status_only("SET")
        if lowered.startswith("reset"):
            name = lowered.split(None, 1)[1] if " " in lowered else ""
            if name == "all":
                self._restore(self.defaults)
            elif name in _CANONICAL and _CANONICAL[name] not in READ_ONLY:
                self._assign(_CANONICAL[name], self.defaults[_CANONICAL[name]])
            elif name in _CANONICAL:
                raise ReadOnlySettingError(f'parameter "{name}" cannot be changed')
            elif "." not in name:
                raise UnknownSettingError(f"unrecognized configuration parameter {name!r}")
            return QueryResult.status_only("RESET")
        statement = read_set(text)
        if statement is None:
            raise SqlError(f"cannot read SET statement {text!r}: expected SET name = value")
        name, value = statement.name, statement.value.strip("'\"")
        if name not in _CANONICAL and "." not in name:
            raise UnknownSettingError(f"unrecognized configuration parameter {name!r}")
        canonical = _CANONICAL.get(name, name)
        if canonical in READ_ONLY:
            raise ReadOnlySettingError(f'parameter "{name}" cannot be changed')
        if name == "client_encoding" and value.upper().replace("-", "") not in ("UTF8", "UNICODE"):
            raise UnsupportedStatementError(
                f"client_encoding: kyma speaks only UTF8, not {value!r}"
            )
        if value.lower() == "default":
            value = self.defaults.get(canonical, "")
        value = _normalized(canonical, value)
        if statement.local and not self.transaction.set_local(canonical):
            return QueryResult.status_only("SET")  # outside a block: no effect, as in Postgres
        if not statement.local:
            self.transaction.set_session(canonical, value)
        self._assign(canonical, value)
        return QueryResult.status_only("SET")

    def _assign(self, name: str, value: str) -> None:
        self.settings[name] = value
        if name in REPORTED:
            self.changed.append(name)

    def _restore(self, settings: dict[str, str]) -> None:
        """Every setting back to ``settings`` (a ROLLBACK, the end of SET LOCAL, RESET ALL);
        reported ones that change are sent again."""
        for name in self.settings:
            if name not in settings:  # a custom setting stays defined, empty
                settings = {**settings, name: ""}
        for name, value in settings.items():
            if self.settings.get(name) != value:
                self._assign(name, value)

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


def _normalized(name: str, value: str) -> str:
    """A time setting as Postgres shows it (ConfigError, 22023, if it cannot be read)."""
    return shown(milliseconds(name, value)) if name in TIMES else value


def _one(name: str, value: str) -> QueryResult:
    return QueryResult(pa.table({name: pa.array([value], pa.string())}), "OK")
