"""Flight SQL commands on the wire: protobuf messages packed in ``google.protobuf.Any``.

A FlightDescriptor's ``cmd``, a Ticket and an Action body each carry one packed message;
the message classes are kyma's own, declared from the spec (``_messages``).
"""

from __future__ import annotations

from typing import TypeVar

import pyarrow as pa
import pyarrow.flight as flight
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from kyma.flight import _messages as msg

M = TypeVar("M", bound=Message)

# Every message kyma accepts, by the name an Any's type_url ends with.
COMMANDS: dict[str, type[Message]] = {
    cls.DESCRIPTOR.full_name: cls
    for cls in (
        msg.CommandStatementQuery,
        msg.CommandStatementUpdate,
        msg.CommandStatementIngest,
        msg.CommandPreparedStatementQuery,
        msg.CommandPreparedStatementUpdate,
        msg.TicketStatementQuery,
        msg.CommandGetCatalogs,
        msg.CommandGetDbSchemas,
        msg.CommandGetTables,
        msg.CommandGetTableTypes,
        msg.CommandGetSqlInfo,
        msg.CommandGetPrimaryKeys,
        msg.ActionCreatePreparedStatementRequest,
        msg.ActionClosePreparedStatementRequest,
    )
}


def pack(message: Message) -> bytes:
    """``message`` packed in an Any, serialized."""
    wrapper = any_pb2.Any()
    wrapper.Pack(message)
    return wrapper.SerializeToString()


def unpack(data: bytes) -> Message:
    """The Flight SQL message packed in ``data``; ArrowInvalid for anything else."""
    wrapper = any_pb2.Any()
    try:
        wrapper.ParseFromString(data)
    except DecodeError:
        raise pa.ArrowInvalid(
            "expected a Flight SQL command packed in google.protobuf.Any"
        ) from None
    name = wrapper.type_url.rpartition("/")[2]
    cls = COMMANDS.get(name)
    if cls is None:
        raise pa.ArrowNotImplementedError(f"Flight SQL command {name!r} is not supported by kyma")
    message = cls()
    wrapper.Unpack(message)
    return message


def unpack_as(data: bytes, cls: type[M]) -> M:
    """The message packed in ``data``, which must be a ``cls``."""
    message = unpack(data)
    if not isinstance(message, cls):
        got = message.DESCRIPTOR.name
        raise pa.ArrowInvalid(f"expected {cls.DESCRIPTOR.name}, got {got}")
    return message


def descriptor_command(descriptor: flight.FlightDescriptor) -> Message:
    if descriptor.descriptor_type != flight.DescriptorType.CMD:
        raise pa.ArrowInvalid("kyma answers command descriptors only (Flight SQL), not paths")
    return unpack(descriptor.command)


# ---------------------------------------------------------------- result schemas (the spec's)

_SQL_INFO_VALUE = pa.dense_union(
    [
        pa.field("string_value", pa.utf8()),
        pa.field("bool_value", pa.bool_()),
        pa.field("bigint_value", pa.int64()),
        pa.field("int32_bitmask", pa.int32()),
        pa.field("string_list", pa.list_(pa.utf8())),
        pa.field(
            "int32_to_int32_list_map",
            pa.map_(pa.int32(), pa.list_(pa.int32())),
        ),
    ],
    type_codes=[0, 1, 2, 3, 4, 5],
)

CATALOGS = pa.schema([pa.field("catalog_name", pa.utf8(), nullable=False)])
DB_SCHEMAS = pa.schema(
    [pa.field("catalog_name", pa.utf8()), pa.field("db_schema_name", pa.utf8(), nullable=False)]
)
TABLES = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), nullable=False),
        pa.field("table_type", pa.utf8(), nullable=False),
    ]
)
TABLES_WITH_SCHEMA = TABLES.append(pa.field("table_schema", pa.binary(), nullable=False))
TABLE_TYPES = pa.schema([pa.field("table_type", pa.utf8(), nullable=False)])
SQL_INFO = pa.schema(
    [pa.field("info_name", pa.uint32(), nullable=False), pa.field("value", _SQL_INFO_VALUE, False)]
)
PRIMARY_KEYS = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), nullable=False),
        pa.field("column_name", pa.utf8(), nullable=False),
        pa.field("key_sequence", pa.int32(), nullable=False),
        pa.field("key_name", pa.utf8()),
    ]
)
