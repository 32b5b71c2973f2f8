"""Columns as Flight SQL clients see them: dynamic values as JSON text (never CBOR bytes),
and every field named with its SQL type, as the Postgres protocol names it.

The type name travels in the field metadata key Flight SQL defines for it
(``ARROW:FLIGHT:SQL:TYPE_NAME``), which ADBC reports as ``xdbc_type_name`` and SQL IDEs show.
"""

from __future__ import annotations

import pyarrow as pa

from kyma.dynamic import is_dynamic, json_texts
from kyma.engine.query.pg_numeric import decimals
from kyma.pgcatalog._relations import TYPE_NAMES, formatted_type
from kyma.pgwire._types import type_oid

TYPE_NAME = b"ARROW:FLIGHT:SQL:TYPE_NAME"


def client_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with dynamic fields as strings and a type name on every field."""
    return pa.schema([_client_field(f) for f in schema], schema.metadata)


def client_table(table: pa.Table) -> pa.Table:
    """``table`` as clients get it: dynamic columns as JSON text, numeric text as decimals,
    fields typed by name."""
    table = decimals(table)
    columns = [
        json_texts(column) if is_dynamic(field) else column
        for field, column in zip(table.schema, table.columns, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=client_schema(table.schema))


def _client_field(field: pa.Field) -> pa.Field:
    name = formatted_type(TYPE_NAMES.get(type_oid(field), "text"))
    metadata = {**(field.metadata or {}), TYPE_NAME: name.encode()}
    dtype = pa.string() if is_dynamic(field) else field.type
    return pa.field(field.name, dtype, field.nullable, metadata)
