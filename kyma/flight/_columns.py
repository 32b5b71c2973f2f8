"""Columns as Flight SQL clients see them: dynamic values as JSON text (never CBOR bytes),
and every field named with its SQL type, as the Postgres protocol names it.

The type name travels in the field metadata key Flight SQL defines for it
(``ARROW:FLIGHT:SQL:TYPE_NAME``), which ADBC reports as ``xdbc_type_name`` and SQL IDEs show.
"""

from __future__ import annotations

import cbor2
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from kyma.pgwire._pg_catalog import TYPE_NAMES, formatted_type
from kyma.pgwire._types import type_oid
from kyma.server.query import is_dynamic

TYPE_NAME = b"ARROW:FLIGHT:SQL:TYPE_NAME"


def client_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with dynamic fields as strings and a type name on every field."""
    return pa.schema([_client_field(f) for f in schema], schema.metadata)


def client_table(table: pa.Table) -> pa.Table:
    """``table`` as clients get it: dynamic columns as JSON text, fields typed by name."""
    columns = [
        _json_text(column) if is_dynamic(field) else column
        for field, column in zip(table.schema, table.columns, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=client_schema(table.schema))


def _client_field(field: pa.Field) -> pa.Field:
    name = formatted_type(TYPE_NAMES.get(type_oid(field), "text"))
    metadata = {**(field.metadata or {}), TYPE_NAME: name.encode()}
    dtype = pa.string() if is_dynamic(field) else field.type
    return pa.field(field.name, dtype, field.nullable, metadata)


def _json_text(column: pa.ChunkedArray) -> pa.Array:
    """Each CBOR value as compact JSON, each distinct value decoded once."""
    values = column.combine_chunks()
    distinct = pc.unique(values)
    texts = pa.array(
        [None if raw is None else _json(cbor2.loads(raw)) for raw in distinct.to_pylist()],
        pa.string(),
    )
    return texts.take(pc.index_in(values, distinct))


def _json(value: object) -> str:
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
