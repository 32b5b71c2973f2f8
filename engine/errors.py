"""The one exception hierarchy of kyma.

Every error is either *retryable* (the same call may succeed later: a lost connection, a
commit conflict) or *terminal* (the input or the request is wrong). Loops that retry or
dead-letter decide from the class alone. Subclasses also inherit the matching builtin, so
``except ValueError`` keeps working for callers that do not know kyma. HTTP status codes are
chosen at the edge, in the server's error handlers, never here.

Every exception pickles: Spark ships them between processes. Keep ``__init__`` signatures
compatible with ``cls(*self.args)``.
"""

from __future__ import annotations


class KymaError(Exception):
    """Root of every error kyma raises on purpose."""

    retryable = False


class RetryableError(KymaError):
    """The same operation may succeed if tried again."""

    retryable = True


class TerminalError(KymaError):
    """Trying again with the same input fails the same way."""


class NotInstalledError(TerminalError, ImportError):
    """An optional component's extra is not installed."""

    def __init__(self, component: str, extra: str) -> None:
        super().__init__(component, extra)
        self.component = component
        self.extra = extra

    def __str__(self) -> str:
        return f"{self.component} needs the {self.extra!r} extra: pip install 'kyma[{self.extra}]'"


class ConfigError(TerminalError, ValueError):
    """A setting is missing or malformed."""


class SchemaError(TerminalError, ValueError):
    """A type, column or table definition is invalid."""


class IngestError(TerminalError, ValueError):
    """An ingest body is malformed; ``line`` (1-based) and ``field`` name the spot when known."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message, line, field)
        self.line = line
        self.field = field

    def __str__(self) -> str:
        return str(self.args[0])

    def shifted(self, lines: int, where: str) -> IngestError:
        """The error of a body that began ``lines`` lines into ``where`` (a file), said so."""
        message, line = str(self), self.line
        if line is not None and lines:
            old = f"line {line}"
            line += lines
            if message.startswith(old):
                message = f"line {line}" + message[len(old) :]
        return IngestError(f"{where}: {message}", line, self.field)


class NotFoundError(TerminalError, LookupError):
    """A named table, column or object does not exist."""


class UndefinedColumnError(NotFoundError):
    """A statement names a column that none of its tables has."""


class AmbiguousColumnError(TerminalError, LookupError):
    """A statement names a column, without its table, that more than one of its tables has."""


class AlreadyExistsError(TerminalError, ValueError):
    """A table or column with that name exists already."""


class DuplicateRelationError(AlreadyExistsError):
    """A table or view with that name exists already (tables and views share names)."""


class UndefinedSchemaError(NotFoundError):
    """A schema kyma's database does not have (kyma's tables are all in ``public``)."""


class FormatError(TerminalError, ValueError):
    """An extent's bytes do not follow the format (bad magic, footer, body)."""


class SqlError(TerminalError, ValueError):
    """A statement could not be parsed or is not supported."""


class StatementLimitError(SqlError):
    """A statement is longer or nests deeper than a configured limit; ``limit`` names it."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message, limit)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])


class StatementTooComplexError(StatementLimitError):
    """A statement has more set-operation branches, query blocks or table references than
    ``KYMA_MAX_PLAN_RELATIONS`` allows (Postgres's ``statement_too_complex``)."""


class UnsupportedStatementError(SqlError):
    """A statement parsed, but kyma does not run that kind of statement."""


class UndefinedFunctionError(SqlError):
    """A statement calls a function kyma does not know (by that name or those arguments)."""


class GroupingError(SqlError):
    """A column in the select list of a grouped query is neither grouped nor aggregated."""


class WrongObjectTypeError(SqlError):
    """A statement for one kind of relation names another (DROP VIEW of a table)."""


class InvalidViewError(SqlError):
    """A view's definition cannot be: more names than columns, or CREATE OR REPLACE VIEW
    dropping, renaming or retyping a column."""


class DuplicateColumnError(SqlError):
    """A new table's or view's column list names one column twice."""


class DependentObjectsError(SqlError):
    """DROP of a table or view that views still read."""


class InfiniteRecursionError(SqlError):
    """Views that read each other (CREATE OR REPLACE can close a circle)."""


class DataError(SqlError):
    """A value is wrong for its operation: bad text for a type, out of range, a zero divisor."""


class InvalidTextError(DataError):
    """Text that does not read as the type it is cast to (``'abc'::int``, ``'{1,2'::int[]``)."""


class BadCopyDataError(DataError):
    """COPY FROM data that is not in its format (a row of too few or too many fields)."""


class InvalidDatetimeError(InvalidTextError):
    """Text that does not read as a date or timestamp (``'nope'::date``)."""


class OutOfRangeError(DataError, ArithmeticError):
    """A number does not fit its type (``integer out of range``, ``numeric field overflow``)."""


class DivisionByZeroError(DataError, ZeroDivisionError):
    """An integer or numeric division, or a modulo, by zero."""


class InvalidLogarithmError(DataError, ValueError):
    """The logarithm of zero or of a negative number."""


class InvalidJsonError(SqlError):
    """A text given as JSON (``'…'::jsonb``, a jsonb path) is not valid JSON."""


class JsonValueError(SqlError):
    """A jsonb function got a value of the wrong kind (``jsonb_array_length`` of an object)."""


class TransactionAbortedError(SqlError):
    """A statement came after an error in the same transaction block, before its end."""


class NoTransactionError(SqlError):
    """A statement that only means something in a transaction block came outside one."""


class SavepointError(SqlError):
    """ROLLBACK TO or RELEASE names a savepoint the transaction does not have."""


class CursorNotFoundError(SqlError):
    """FETCH, MOVE or CLOSE names a cursor (a portal) the session does not have."""


class DuplicateCursorError(SqlError):
    """DECLARE names a cursor the session already has open."""


class ReadOnlySettingError(SqlError):
    """SET or RESET of a configuration parameter that cannot be changed (server_version)."""


class UndefinedPreparedStatementError(SqlError):
    """EXECUTE or DEALLOCATE names a prepared statement the session does not have."""


class DuplicatePreparedStatementError(SqlError):
    """PREPARE names a prepared statement the session has already."""


class UnknownSettingError(SqlError):
    """SET, SHOW, RESET or current_setting() names a configuration parameter kyma lacks."""


class ObjectStoreError(RetryableError, OSError):
    """The object store failed to answer; the call may succeed later."""


class StoreWriteError(ObjectStoreError):
    """The object store refused a write (a full disk, a read-only mount, lost permissions);
    nothing was committed, and the same request may succeed once the store is writable."""

    retry_after = 5


class CatalogUnavailableError(RetryableError, ConnectionError):
    """The catalog database could not be reached."""


class IngestWorkerError(RetryableError):
    """An ingest worker process died (or the pool was shut down) while encoding a request;
    nothing of that request was committed."""


class CommitConflictError(RetryableError):
    """The table head kept moving; the commit gave up after its retry budget."""


class StaleCommitError(TerminalError):
    """A commit's precondition no longer holds (an extent it removes is already gone)."""


class RuntimeStartError(TerminalError, RuntimeError):
    """The embedded runtime could not start (missing binaries, unusable home folder)."""


class LimitExceededError(TerminalError, ValueError):
    """A request is larger than a configured limit; the message names the limit."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message, limit)
        self.limit = limit

    def __str__(self) -> str:
        return str(self.args[0])


class IdempotencyKeyReusedError(TerminalError, ValueError):
    """An idempotency key came back with a different body."""


class IdempotencyInFlightError(RetryableError):
    """Another request with the same idempotency key is still running."""


class SourceUnreachableError(RetryableError, ConnectionError):
    """A federated source could not be reached (connection refused, timed out, lost)."""


class PoolExhaustedError(RetryableError):
    """Every connection of a connector's pool stayed busy past the wait limit."""


class ConnectorDisabledError(TerminalError):
    """A connector is disabled; the message carries its disabled_reason."""


class PushdownFailedError(TerminalError):
    """A source rejected the SQL kyma pushed to it: a kyma bug, logged with SQL and residual."""


class TlsFailedError(TerminalError, ConnectionError):
    """The TLS handshake with a source failed; its connector is disabled until re-enabled."""


class FencedWriterError(TerminalError):
    """A commit carried a source position its writer no longer owns (a newer epoch claimed
    the partition) or that would move backwards; the commit was rolled back."""


class UnauthenticatedError(TerminalError, PermissionError):
    """No credentials, or ones kyma does not accept (an unknown or revoked token)."""


class PermissionDeniedError(TerminalError, PermissionError):
    """The caller is known but may not do this: ``scope`` or ``table`` names what is missing."""

    def __init__(self, message: str, scope: str | None = None, table: str | None = None) -> None:
        super().__init__(message, scope, table)
        self.scope = scope
        self.table = table

    def __str__(self) -> str:
        return str(self.args[0])


class QueryTimeoutError(LimitExceededError):
    """A statement ran past the query timeout; its work was cancelled or abandoned."""


class QueryCancelledError(TerminalError):
    """The client cancelled the statement while it ran (a Postgres CancelRequest)."""


class StatementStoppedError(QueryCancelledError):
    """Someone stopped the statement while it ran (``KILL QUERY``, ``DELETE /v1/queries/<id>``,
    ``pg_cancel_backend``): its owner or an admin."""


class EngineFailedError(TerminalError):
    """The query engine failed inside while running one statement (a DataFusion panic,
    raised as pyo3's ``PanicException``); that statement fails, the server goes on."""


class StatementQuarantinedError(TerminalError):
    """The statement was running when the server died twice (a crash, not a shutdown); it is
    refused until ``KYMA_QUARANTINE_SECONDS`` after the last crash. ``fingerprint`` names it."""

    def __init__(self, message: str, fingerprint: str = "") -> None:
        super().__init__(message, fingerprint)
        self.fingerprint = fingerprint

    def __str__(self) -> str:
        return str(self.args[0])


class TooManyQueriesError(RetryableError):
    """Every query slot is taken; ``retry_after`` (seconds) says when to try again."""

    def __init__(self, message: str, limit: str = "", retry_after: int = 1) -> None:
        super().__init__(message, limit, retry_after)
        self.limit = limit
        self.retry_after = retry_after

    def __str__(self) -> str:
        return str(self.args[0])


# Codes the seeds name; the rest derive from the class name.
_CODES = {
    IdempotencyKeyReusedError: "idempotency_key_reused",
    SourceUnreachableError: "source_unreachable",
    PoolExhaustedError: "pool_exhausted",
    ConnectorDisabledError: "connector_disabled",
    PushdownFailedError: "pushdown_failed",
    TlsFailedError: "tls_failed",
    UnauthenticatedError: "unauthenticated",
    PermissionDeniedError: "permission_denied",
    DuplicateRelationError: "already_exists_error",  # as before tables and views shared names
}


def error_code(error: BaseException) -> str:
    """The error's kind as HTTP answers and log lines name it: ``sql_error``, ``tls_failed``."""
    if type(error) in _CODES:
        return _CODES[type(error)]
    return "".join("_" + c.lower() if c.isupper() else c for c in type(error).__name__).lstrip("_")
