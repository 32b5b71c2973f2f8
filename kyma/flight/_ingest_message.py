"""Flight SQL's ``CommandStatementIngest`` message, which ``flightsql-dbapi`` predates.

Built from its descriptor as FlightSql.proto (Arrow 15 and later) declares it, field for
field, in a pool of its own: the wire bytes and the ``Any`` type URL are the spec's. The
``options`` map (field 1000, for future options) is left out: a server honours none.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

_PACKAGE = "arrow.flight.protocol.sql"
_F = descriptor_pb2.FieldDescriptorProto

# TableDefinitionOptions' enums, by the numbers the spec gives them.
IF_NOT_EXIST = ("UNSPECIFIED", "CREATE", "FAIL")
IF_EXISTS = ("UNSPECIFIED", "FAIL", "APPEND", "REPLACE")


def _message_class() -> type[Message]:
    file = descriptor_pb2.FileDescriptorProto(
        name="kyma/flight_sql_ingest.proto", package=_PACKAGE, syntax="proto3"
    )
    ingest = file.message_type.add(name="CommandStatementIngest")
    options = ingest.nested_type.add(name="TableDefinitionOptions")
    scope = f".{_PACKAGE}.CommandStatementIngest.TableDefinitionOptions"
    for number, (enum, values) in enumerate(
        (("TableNotExistOption", IF_NOT_EXIST), ("TableExistsOption", IF_EXISTS)), 1
    ):
        prefix = "TABLE_NOT_EXIST_OPTION_" if number == 1 else "TABLE_EXISTS_OPTION_"
        kind = options.enum_type.add(name=enum)
        for value, name in enumerate(values):
            kind.value.add(name=prefix + name, number=value)
        options.field.add(
            name=("if_not_exist", "if_exists")[number - 1],
            number=number,
            type=_F.TYPE_ENUM,
            label=_F.LABEL_OPTIONAL,
            type_name=f"{scope}.{enum}",
        )
    ingest.field.add(
        name="table_definition_options",
        number=1,
        type=_F.TYPE_MESSAGE,
        label=_F.LABEL_OPTIONAL,
        type_name=scope,
    )
    ingest.field.add(name="table", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    ingest.field.add(name="temporary", number=5, type=_F.TYPE_BOOL, label=_F.LABEL_OPTIONAL)
    for name, number, kind in (
        ("schema", 3, _F.TYPE_STRING),
        ("catalog", 4, _F.TYPE_STRING),
        ("transaction_id", 6, _F.TYPE_BYTES),
    ):  # proto3 ``optional``: each in a synthetic oneof, so presence is known
        ingest.oneof_decl.add(name=f"_{name}")
        ingest.field.add(
            name=name,
            number=number,
            type=kind,
            label=_F.LABEL_OPTIONAL,
            oneof_index=len(ingest.oneof_decl) - 1,
            proto3_optional=True,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName(f"{_PACKAGE}.CommandStatementIngest")
    return message_factory.GetMessageClass(descriptor)


CommandStatementIngest = _message_class()
