"""What each error class answers at each edge: one table, read by every protocol.

An edge (the Flask error handlers, the Flight SQL server, the OTLP receiver, the Postgres
protocol) looks up the first row whose class the error is an instance of *and* that names a
status for that edge: more specific classes come first. gRPC codes are ``grpc.StatusCode``
names; Flight turns its code into the pyarrow exception that carries it. Nothing here is
imported from a protocol library: the engine stays free of them.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kyma.engine import errors as e


class Status(NamedTuple):
    http: int | None = None
    flight: str | None = None  # gRPC code of the Flight SQL answer
    otlp: str | None = None  # gRPC code of an OTLP export's answer
    sqlstate: str | None = None  # Postgres protocol


Edge = Literal["http", "flight", "otlp", "sqlstate"]

# fmt: off
STATUSES: tuple[tuple[type[BaseException], Status], ...] = (
    (e.UnauthenticatedError, Status(401, "UNAUTHENTICATED", "UNAUTHENTICATED", "28P01")),
    (e.PermissionDeniedError, Status(403, "PERMISSION_DENIED", "PERMISSION_DENIED", "42501")),
    (e.UndefinedColumnError, Status(404, "NOT_FOUND", sqlstate="42703")),
    (e.AmbiguousColumnError, Status(400, sqlstate="42702")),  # ambiguous_column
    (e.DuplicateRelationError, Status(409, sqlstate="42P07")),  # duplicate_table
    (e.WrongObjectTypeError, Status(400, sqlstate="42809")),  # wrong_object_type
    (e.InvalidViewError, Status(400, sqlstate="42P16")),  # invalid_table_definition
    (e.DuplicateColumnError, Status(400, sqlstate="42701")),  # duplicate_column
    (e.DependentObjectsError, Status(409, sqlstate="2BP01")),  # dependent_objects_still_exist
    (e.InfiniteRecursionError, Status(400, sqlstate="42P17")),  # invalid_object_definition
    (e.UndefinedSchemaError, Status(404, "NOT_FOUND", sqlstate="3F000")),  # invalid_schema_name
    (e.NotFoundError, Status(404, "NOT_FOUND", sqlstate="42P01")),  # undefined_table
    (e.QueryTimeoutError, Status(408, sqlstate="57014")),  # query_canceled
    # stopped by its owner or an admin from elsewhere: the caller is still there to read it
    (e.StatementStoppedError, Status(409, "CANCELLED", sqlstate="57014")),
    # 499: the client closed the request (nginx's code); it is gone and never reads it.
    (e.QueryCancelledError, Status(499, "CANCELLED", sqlstate="57014")),
    (e.StatementQuarantinedError, Status(409, sqlstate="55000")),  # not_in_prerequisite_state
    (e.StatementTooComplexError, Status(400, sqlstate="54001")),  # statement_too_complex
    (e.OutOfRangeError, Status(400, sqlstate="22003")),  # numeric_value_out_of_range
    (e.LimitExceededError, Status(413, otlp="RESOURCE_EXHAUSTED", sqlstate="54000")),
    (e.TooManyQueriesError, Status(429, sqlstate="53300")),  # too_many_connections
    (e.UnsupportedStatementError, Status(flight="UNIMPLEMENTED", sqlstate="0A000")),
    (e.UndefinedFunctionError, Status(400, sqlstate="42883")),
    (e.GroupingError, Status(400, sqlstate="42803")),  # grouping_error
    (e.InvalidDatetimeError, Status(400, sqlstate="22007")),  # invalid_datetime_format
    (e.InvalidTextError, Status(400, sqlstate="22P02")),  # invalid_text_representation
    (e.BadCopyDataError, Status(400, sqlstate="22P04")),  # bad_copy_file_format
    (e.DivisionByZeroError, Status(400, sqlstate="22012")),
    (e.InvalidLogarithmError, Status(400, sqlstate="2201E")),  # invalid_argument_for_logarithm
    (e.DataError, Status(400, sqlstate="22000")),  # data_exception
    (e.TransactionAbortedError, Status(sqlstate="25P02")),  # in_failed_sql_transaction
    (e.NoTransactionError, Status(sqlstate="25P01")),  # no_active_sql_transaction
    (e.SavepointError, Status(sqlstate="3B001")),  # invalid_savepoint_specification
    (e.CursorNotFoundError, Status(sqlstate="34000")),  # invalid_cursor_name
    (e.DuplicateCursorError, Status(sqlstate="42P03")),  # duplicate_cursor
    (e.UnknownSettingError, Status(sqlstate="42704")),  # undefined_object
    (e.UndefinedPreparedStatementError, Status(sqlstate="26000")),  # invalid_sql_statement_name
    (e.DuplicatePreparedStatementError, Status(sqlstate="42P05")),  # duplicate_prepared_statement
    (e.ReadOnlySettingError, Status(sqlstate="55P02")),  # cant_change_runtime_param
    (e.IdempotencyKeyReusedError, Status(422)),
    (e.IdempotencyInFlightError, Status(409)),
    (e.AlreadyExistsError, Status(409)),
    (e.CommitConflictError, Status(409)),
    (e.StaleCommitError, Status(409)),
    (e.CatalogUnavailableError, Status(503, sqlstate="57P03")),  # cannot_connect_now
    (e.SourceUnreachableError, Status(502, sqlstate="08001")),  # unable_to_establish_connection
    (e.TlsFailedError, Status(502, "UNAVAILABLE")),
    (e.PoolExhaustedError, Status(503)),
    (e.IngestWorkerError, Status(503)),
    (e.ConnectorDisabledError, Status(503, "UNAVAILABLE")),
    (e.ObjectStoreError, Status(503)),
    (e.PushdownFailedError, Status(flight="INTERNAL")),
    (e.IngestError, Status(400, otlp="INVALID_ARGUMENT", sqlstate="22P02")),
    (e.InvalidJsonError, Status(400, sqlstate="22P02")),  # invalid_text_representation
    (e.JsonValueError, Status(400, sqlstate="22023")),  # invalid_parameter_value
    (e.SqlError, Status(400, sqlstate="42601")),  # syntax_error
    (e.SchemaError, Status(400, sqlstate="42804")),  # datatype_mismatch
    (e.ConfigError, Status(400, sqlstate="22023")),  # invalid_parameter_value
    (e.RetryableError, Status(flight="UNAVAILABLE", otlp="UNAVAILABLE", sqlstate="58000")),
    (e.TerminalError, Status(flight="INVALID_ARGUMENT")),
    (e.KymaError, Status(otlp="FAILED_PRECONDITION")),  # e.g. a table of the wrong shape
)
# fmt: on

INTERNAL = Status(500, "INTERNAL", "INTERNAL", "XX000")
"""What any other error answers (the server logs it)."""


def status(error: BaseException, edge: Edge) -> int | str:
    """The status ``error`` answers at ``edge``.

    >>> status(e.LimitExceededError("too big"), "http"), status(ValueError(), "sqlstate")
    (413, 'XX000')
    """
    for kind, row in STATUSES:
        if isinstance(error, kind) and (found := getattr(row, edge)) is not None:
            return found  # type: ignore[no-any-return]
    return getattr(INTERNAL, edge)  # type: ignore[no-any-return]
