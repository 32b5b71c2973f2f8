"""The Flight SQL server: Flight RPCs in, kyma's query engine and catalog behind them.

GetFlightInfo takes a command (a statement, a prepared statement or a metadata request) and
answers one endpoint whose ticket DoGet redeems; DoAction creates and closes prepared
statements; DoPut binds their parameters, runs update statements and ingests Arrow streams
(``CommandStatementIngest``, ``_ingest``). Results stream in
record batches of at most ``BATCH_ROWS`` rows.

Auth: a middleware keeps each call's ``authorization`` header; ``_authorize`` (every RPC
passes there, listings too) turns it into the caller, statements run with the caller's
check, and metadata answers show what the caller may read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from kyma.auth import Authenticator, Principal
from kyma.engine.catalog import TableInfo
from kyma.engine.errors import NotFoundError
from kyma.engine.query import QueryResult
from kyma.flight import _commands as cmd
from kyma.flight import _messages as msg
from kyma.flight import _metadata as meta
from kyma.flight._columns import client_table
from kyma.flight._errors import translated
from kyma.flight._ingest import ingest
from kyma.flight._params import bind, placeholders
from kyma.flight._prepare import parameter_schema, probe
from kyma.flight._state import PreparedStatements, ResultCache
from kyma.services import Services

log = logging.getLogger("kyma.flight")

BATCH_ROWS = 65_536
CREATE_PREPARED = "CreatePreparedStatement"
CLOSE_PREPARED = "ClosePreparedStatement"

# Metadata commands: their fixed result schema, and how DoGet builds the answer for a caller.
_METADATA: dict[type, tuple[Any, Any]] = {
    msg.CommandGetCatalogs: (lambda c: cmd.CATALOGS, lambda s, c, p: meta.catalogs(s, p)),
    msg.CommandGetDbSchemas: (lambda c: cmd.DB_SCHEMAS, meta.db_schemas),
    msg.CommandGetTables: (
        lambda c: cmd.TABLES_WITH_SCHEMA if c.include_schema else cmd.TABLES,
        meta.tables,
    ),
    msg.CommandGetTableTypes: (
        lambda c: cmd.TABLE_TYPES,
        lambda s, c, p: meta.table_types(),
    ),
    msg.CommandGetSqlInfo: (lambda c: cmd.SQL_INFO, lambda s, c, p: meta.sql_info(c)),
    msg.CommandGetPrimaryKeys: (
        lambda c: cmd.PRIMARY_KEYS,
        lambda s, c, p: meta.primary_keys(),
    ),
}


class _Headers(flight.ServerMiddleware):
    def __init__(self, authorization: str | None) -> None:
        self.authorization = authorization


class _HeadersFactory(flight.ServerMiddlewareFactory):
    def start_call(self, info: flight.CallInfo, headers: dict[str, list[str]]) -> _Headers:
        values = headers.get("authorization")
        return _Headers(values[0] if values else None)


class KymaFlightServer(flight.FlightServerBase):
    def __init__(
        self, services: Services, host: str, port: int, tls: tuple[bytes, bytes] | None = None
    ) -> None:
        self.scheme = "grpc+tls" if tls else "grpc"
        super().__init__(
            f"{self.scheme}://{host}:{port}",
            tls_certificates=[flight.CertKeyPair(*tls)] if tls else None,
            middleware={"headers": _HeadersFactory()},
        )
        self.services = services
        self.host = host
        self.authenticator = Authenticator(services.stores.tokens, services.settings.auth)
        self.results = ResultCache()
        self.prepared = PreparedStatements()

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def _authorize(
        self, context: flight.ServerCallContext, scope: str | None = "read"
    ) -> Principal:
        """The caller of an RPC, who must hold ``scope`` (None: any: a statement is
        authorized by what it does when it runs); every RPC passes here."""
        headers = context.get_middleware("headers")
        caller = self.authenticator.principal(headers.authorization if headers else None)
        if scope is not None:
            caller.require(scope)
        return caller

    # ---------------------------------------------------------------- statements

    def _execute(self, context: flight.ServerCallContext, sql: str) -> pa.Table:
        return client_table(self._result(context, sql).table)

    def _result(self, context: flight.ServerCallContext, sql: str) -> QueryResult:
        caller = self._authorize(context, scope=None)  # the engine checks the statement
        authorize = None if caller.unrestricted else caller.authorize
        # A client that cancels its call or goes away cancels the statement.
        cancel = context.is_cancelled
        return self.services.query.execute(
            sql, authorize=authorize, cancel=cancel, caller=caller.caller("flight")
        )

    def _run(
        self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor, sql: str
    ) -> flight.FlightInfo:
        result = self._result(context, sql)
        table = client_table(result.table)
        ticket = cmd.pack(msg.TicketStatementQuery(statement_handle=self.results.put(table)))
        endpoint = flight.FlightEndpoint(ticket, [])
        # A write's count is its rows (what ADBC reports as the cursor's rowcount).
        count = result.rowcount if result.rowcount >= 0 else table.num_rows
        return flight.FlightInfo(table.schema, descriptor, [endpoint], count, -1)

    def _schemas(
        self, context: flight.ServerCallContext, sql: str
    ) -> tuple[pa.Schema | None, pa.Schema]:
        """A statement's dataset schema (a query's, planned with NULL parameters: an error in
        it fails now, as PREPARE does in Postgres) and its parameter schema."""
        query = probe(sql)
        dataset = self._execute(context, query).schema if query is not None else None
        caller = self._authorize(context, scope=None)

        def table(name: str) -> TableInfo:
            if not caller.may_touch(name):
                raise NotFoundError(name)
            return self.services.catalog.get_table(name)

        return dataset, parameter_schema(sql, table)

    def _prepared_sql(self, handle: bytes) -> str:
        prepared = self.prepared.get(handle)
        return bind(prepared.sql, prepared.parameters)

    # ---------------------------------------------------------------- Flight RPCs

    @translated
    def get_flight_info(
        self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor
    ) -> flight.FlightInfo:
        self._authorize(context, scope=None)
        command = cmd.descriptor_command(descriptor)
        if isinstance(command, msg.CommandStatementQuery):
            return self._run(context, descriptor, command.query)
        if isinstance(command, msg.CommandPreparedStatementQuery):
            sql = self._prepared_sql(command.prepared_statement_handle)
            return self._run(context, descriptor, sql)
        self._authorize(context)  # metadata: a read token's
        if type(command) not in _METADATA:
            raise pa.ArrowNotImplementedError(
                f"GetFlightInfo does not take {command.DESCRIPTOR.name}"
            )
        schema = _METADATA[type(command)][0](command)
        endpoint = flight.FlightEndpoint(descriptor.command, [])  # the ticket echoes the command
        return flight.FlightInfo(schema, descriptor, [endpoint], -1, -1)

    @translated
    def get_schema(
        self, context: flight.ServerCallContext, descriptor: flight.FlightDescriptor
    ) -> flight.SchemaResult:
        self._authorize(context, scope=None)
        command = cmd.descriptor_command(descriptor)
        if type(command) in _METADATA:
            self._authorize(context)
            return flight.SchemaResult(_METADATA[type(command)][0](command))
        # kyma knows a result's schema only by running the statement; nothing is kept.
        if isinstance(command, msg.CommandStatementQuery):
            return flight.SchemaResult(self._execute(context, command.query).schema)
        if isinstance(command, msg.CommandPreparedStatementQuery):
            sql = self._prepared_sql(command.prepared_statement_handle)
            return flight.SchemaResult(self._execute(context, sql).schema)
        raise pa.ArrowNotImplementedError(f"GetSchema does not take {command.DESCRIPTOR.name}")

    @translated
    def do_get(self, context: flight.ServerCallContext, ticket: flight.Ticket) -> Any:
        caller = self._authorize(context, scope=None)
        command = cmd.unpack(ticket.ticket)
        if isinstance(command, msg.TicketStatementQuery):  # authorized when it ran
            table = self.results.take(command.statement_handle)
        elif type(command) in _METADATA:
            caller.require("read")
            table = _METADATA[type(command)][1](self.services, command, caller)
        else:
            raise pa.ArrowNotImplementedError(f"DoGet does not take {command.DESCRIPTOR.name}")
        batches = table.to_batches(max_chunksize=BATCH_ROWS)
        return flight.RecordBatchStream(pa.RecordBatchReader.from_batches(table.schema, batches))

    @translated
    def do_put(
        self,
        context: flight.ServerCallContext,
        descriptor: flight.FlightDescriptor,
        reader: flight.MetadataRecordBatchReader,
        writer: flight.FlightMetadataWriter,
    ) -> None:
        command = cmd.descriptor_command(descriptor)
        if isinstance(command, msg.CommandPreparedStatementQuery):
            self._authorize(context, scope=None)  # the statement is authorized when it runs
            parameters = reader.read_all()
            prepared = self.prepared.get(command.prepared_statement_handle)
            prepared.parameters = parameters if parameters.num_columns else None
            return
        if isinstance(command, msg.CommandStatementIngest):
            caller = self._authorize(context, scope=None)  # ingest checks what it does
            count = ingest(self.services, caller, command, reader)
            writer.write(
                pa.py_buffer(msg.DoPutUpdateResult(record_count=count).SerializeToString())
            )
            return
        if isinstance(command, msg.CommandStatementUpdate):
            sql = command.query
        elif isinstance(command, msg.CommandPreparedStatementUpdate):
            sql = self._prepared_sql(command.prepared_statement_handle)
        else:
            raise pa.ArrowNotImplementedError(f"DoPut does not take {command.DESCRIPTOR.name}")
        count = self._result(context, sql).rowcount  # INSERT's rows; -1 (unknown) for DDL
        writer.write(pa.py_buffer(msg.DoPutUpdateResult(record_count=count).SerializeToString()))

    @translated
    def do_action(self, context: flight.ServerCallContext, action: flight.Action) -> list:
        self._authorize(context, scope=None)  # preparing runs nothing; executing is checked
        if action.type == CREATE_PREPARED:
            request = cmd.unpack_as(
                action.body.to_pybytes(), msg.ActionCreatePreparedStatementRequest
            )
            placeholders(request.query)  # a malformed placeholder fails now, not at execute
            dataset, parameters = self._schemas(context, request.query)
            handle = self.prepared.create(request.query)
            result = msg.ActionCreatePreparedStatementResult(
                prepared_statement_handle=handle,
                dataset_schema=dataset.serialize().to_pybytes() if dataset else b"",
                parameter_schema=parameters.serialize().to_pybytes() if parameters else b"",
            )
            return [flight.Result(cmd.pack(result))]
        if action.type == CLOSE_PREPARED:
            request = cmd.unpack_as(
                action.body.to_pybytes(), msg.ActionClosePreparedStatementRequest
            )
            self.prepared.close(request.prepared_statement_handle)
            return []
        raise pa.ArrowNotImplementedError(f"action {action.type!r} is not supported by kyma")

    @translated
    def list_flights(self, context: flight.ServerCallContext, criteria: bytes) -> Iterator[Any]:
        """kyma keeps no standing flights: every result is a command's answer."""
        self._authorize(context)
        return iter(())

    @translated
    def list_actions(self, context: flight.ServerCallContext) -> list[tuple[str, str]]:
        self._authorize(context)
        return [
            (CREATE_PREPARED, "prepare a statement; ? or $1 placeholders"),
            (CLOSE_PREPARED, "forget a prepared statement"),
        ]
