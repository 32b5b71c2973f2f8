"""SQLSTATE codes for kyma's errors: chosen here, at the Postgres protocol edge, and nowhere else.

The message is kyma's own, as in the HTTP and Flight SQL answers.
"""

from __future__ import annotations

import logging

from kyma.engine import errors as e

log = logging.getLogger("kyma.pgwire")

# First match wins: more specific classes first (the order of kyma.server.errors.STATUS).
SQLSTATE: tuple[tuple[type[Exception], str], ...] = (
    (e.UnauthenticatedError, "28P01"),  # invalid_password
    (e.PermissionDeniedError, "42501"),  # insufficient_privilege
    (e.NotFoundError, "42P01"),  # undefined_table
    (e.QueryTimeoutError, "57014"),  # query_canceled
    (e.QueryCancelledError, "57014"),
    (e.LimitExceededError, "54000"),  # program_limit_exceeded
    (e.TooManyQueriesError, "53300"),  # too_many_connections
    (e.UnsupportedStatementError, "0A000"),  # feature_not_supported
    (e.TransactionAbortedError, "25P02"),  # in_failed_sql_transaction
    (e.SourceUnreachableError, "08001"),  # sqlclient_unable_to_establish_sqlconnection
    (e.CatalogUnavailableError, "57P03"),  # cannot_connect_now
    (e.SchemaError, "42804"),  # datatype_mismatch
    (e.ConfigError, "22023"),  # invalid_parameter_value
    (e.SqlError, "42601"),  # syntax_error
    (e.RetryableError, "58000"),  # system_error
)
INTERNAL = "XX000"


def sqlstate(error: Exception) -> str:
    code = next((s for cls, s in SQLSTATE if isinstance(error, cls)), INTERNAL)
    if code == INTERNAL:
        log.error("Postgres protocol request failed: %s", error, exc_info=error)
    return code


def message(error: Exception) -> str:
    if isinstance(error, e.KymaError):
        return str(error)
    return "internal error; see the server log"
