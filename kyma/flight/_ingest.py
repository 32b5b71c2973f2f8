"""``CommandStatementIngest`` (ADBC's ``adbc_ingest``): a DoPut's Arrow stream into a table.

The command's table definition options say what to do with a missing and with an existing
table; ADBC's modes are ``create`` (create, else fail), ``append`` (fail, else append),
``replace`` (create, else replace) and ``create_append`` (create, else append). The rows go
through the one write path (``ingest/arrow_stream.py``) and commit as one snapshot; the
answer is their count. Scopes: ``ingest`` on the table (as REST ingest, which may create
a table too); ``replace`` retires the table's rows and needs ``admin``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from kyma.auth import Principal
from kyma.engine.errors import (
    AlreadyExistsError,
    IngestError,
    NotFoundError,
    UndefinedSchemaError,
    UnsupportedStatementError,
)
from kyma.engine.query.rewrite.schema_names import is_local
from kyma.flight._messages import IF_EXISTS, IF_NOT_EXIST
from kyma.ingest.arrow_stream import ingest_stream, table_columns
from kyma.services import Services

SOURCE = "flight"


def ingest(
    services: Services,
    caller: Principal,
    command: Any,
    reader: flight.MetadataRecordBatchReader,
) -> int:
    """Write the stream as the command says; the rows committed."""
    table = _target(command)
    options = command.table_definition_options
    if_missing = _option(IF_NOT_EXIST, options.if_not_exist, "if_not_exist")
    if_exists = _option(IF_EXISTS, options.if_exists, "if_exists")
    caller.require("ingest", [table])
    catalog = services.catalog
    created = False
    try:
        catalog.get_table(table)
    except NotFoundError:
        if if_missing != "CREATE":
            raise NotFoundError(
                f"table {table!r} does not exist (this ingest mode creates no table)"
            ) from None
        catalog.create_table(table, table_columns(reader.schema))
        created = True
    if not created and if_exists == "FAIL":
        raise AlreadyExistsError(
            f"table {table!r} already exists (ingest mode 'create'; append or replace it)"
        )
    replace = not created and if_exists == "REPLACE"
    if replace:
        caller.require("admin")
    try:
        ack = ingest_stream(
            services.write_path,
            table,
            reader.schema,
            _batches(reader),
            replace=replace,
            source=SOURCE,
        )
    except BaseException:
        if created:  # nothing landed in it: the table goes as if never made
            catalog.drop_table(table, if_exists=True)
        raise
    return ack.rows


def _target(command: Any) -> str:
    """The kyma table the command names; refusals for what kyma does not ingest into."""
    if command.temporary:
        raise UnsupportedStatementError("ingest into a temporary table is not supported")
    if command.HasField("transaction_id"):
        raise UnsupportedStatementError("kyma's Flight SQL server has no transactions")
    table = command.table
    if not table:
        raise IngestError("ingest: no target table named")
    schema = command.schema if command.HasField("schema") else None
    database = command.catalog if command.HasField("catalog") else None
    try:
        local = is_local(schema, database)
    except NotFoundError:
        raise UndefinedSchemaError(f'schema "{schema}" does not exist') from None
    if not local:
        raise UnsupportedStatementError(
            f"ingest writes kyma tables only, not {database}.{schema}.{table}"
        )
    return str(table)


def _option(names: tuple[str, ...], value: int, field: str) -> str:
    if 0 < value < len(names):
        return names[value]
    raise IngestError(f"ingest: table_definition_options.{field} is unspecified or unknown")


def _batches(reader: flight.MetadataRecordBatchReader) -> Iterator[pa.RecordBatch]:
    for chunk in reader:
        if chunk.data is not None:
            yield chunk.data
