"""The Flight SQL protobuf messages kyma's server speaks, defined here from the spec.

Each message is declared field for field as Arrow's ``format/FlightSql.proto`` gives it (the
names, numbers and types are the wire format; the package makes the ``Any`` type URL the
spec's) and built into a descriptor pool of kyma's own at import, so no generated code and no
package pinning another library's versions is needed. Only the messages kyma reads or writes
are here; the ``SqlInfo`` codes kyma answers are plain integers, as they travel.

>>> CommandStatementQuery(query="SELECT 1").SerializeToString()
b'\\n\\x08SELECT 1'
>>> CommandStatementQuery.DESCRIPTOR.full_name
'arrow.flight.protocol.sql.CommandStatementQuery'
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "arrow.flight.protocol.sql"
_F = descriptor_pb2.FieldDescriptorProto
_STRING, _BYTES, _BOOL = _F.TYPE_STRING, _F.TYPE_BYTES, _F.TYPE_BOOL
_INT64, _UINT32 = _F.TYPE_INT64, _F.TYPE_UINT32

# (name, number, type, label): "one" a singular field, "many" repeated, "opt" proto3 optional.
_MESSAGES: dict[str, tuple[tuple[str, int, int, str], ...]] = {
    "CommandGetSqlInfo": (("info", 1, _UINT32, "many"),),
    "CommandGetCatalogs": (),
    "CommandGetDbSchemas": (
        ("catalog", 1, _STRING, "opt"),
        ("db_schema_filter_pattern", 2, _STRING, "opt"),
    ),
    "CommandGetTables": (
        ("catalog", 1, _STRING, "opt"),
        ("db_schema_filter_pattern", 2, _STRING, "opt"),
        ("table_name_filter_pattern", 3, _STRING, "opt"),
        ("table_types", 4, _STRING, "many"),
        ("include_schema", 5, _BOOL, "one"),
    ),
    "CommandGetTableTypes": (),
    "CommandGetPrimaryKeys": (
        ("catalog", 1, _STRING, "opt"),
        ("db_schema", 2, _STRING, "opt"),
        ("table", 3, _STRING, "one"),
    ),
    "ActionCreatePreparedStatementRequest": (
        ("query", 1, _STRING, "one"),
        ("transaction_id", 2, _BYTES, "opt"),
    ),
    "ActionCreatePreparedStatementResult": (
        ("prepared_statement_handle", 1, _BYTES, "one"),
        ("dataset_schema", 2, _BYTES, "one"),
        ("parameter_schema", 3, _BYTES, "one"),
    ),
    "ActionClosePreparedStatementRequest": (("prepared_statement_handle", 1, _BYTES, "one"),),
    "CommandStatementQuery": (
        ("query", 1, _STRING, "one"),
        ("transaction_id", 2, _BYTES, "opt"),
    ),
    "TicketStatementQuery": (("statement_handle", 1, _BYTES, "one"),),
    "CommandPreparedStatementQuery": (("prepared_statement_handle", 1, _BYTES, "one"),),
    "CommandStatementUpdate": (
        ("query", 1, _STRING, "one"),
        ("transaction_id", 2, _BYTES, "opt"),
    ),
    "CommandPreparedStatementUpdate": (("prepared_statement_handle", 1, _BYTES, "one"),),
    "DoPutUpdateResult": (("record_count", 1, _INT64, "one"),),
}


def _add_fields(
    message: descriptor_pb2.DescriptorProto, fields: tuple[tuple[str, int, int, str], ...]
) -> None:
    for name, number, kind, label in fields:
        field = message.field.add(name=name, number=number, type=kind)
        field.label = _F.LABEL_REPEATED if label == "many" else _F.LABEL_OPTIONAL
        if label == "opt":  # proto3 ``optional``: a synthetic oneof, so presence is known
            message.oneof_decl.add(name=f"_{name}")
            field.oneof_index = len(message.oneof_decl) - 1
            field.proto3_optional = True


def _add_ingest(file: descriptor_pb2.FileDescriptorProto) -> None:
    """``CommandStatementIngest`` (Arrow 15 and later); its ``options`` map (field 1000, for
    future options) is left out: a server honours none."""
    ingest = file.message_type.add(name="CommandStatementIngest")
    options = ingest.nested_type.add(name="TableDefinitionOptions")
    scope = f".{_PACKAGE}.CommandStatementIngest.TableDefinitionOptions"
    for number, (enum, prefix, values) in enumerate(
        (
            ("TableNotExistOption", "TABLE_NOT_EXIST_OPTION_", IF_NOT_EXIST),
            ("TableExistsOption", "TABLE_EXISTS_OPTION_", IF_EXISTS),
        ),
        1,
    ):
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
    _add_fields(
        ingest,
        (
            ("table", 2, _STRING, "one"),
            ("schema", 3, _STRING, "opt"),
            ("catalog", 4, _STRING, "opt"),
            ("temporary", 5, _BOOL, "one"),
            ("transaction_id", 6, _BYTES, "opt"),
        ),
    )


# TableDefinitionOptions' enums, by the numbers the spec gives them.
IF_NOT_EXIST = ("UNSPECIFIED", "CREATE", "FAIL")
IF_EXISTS = ("UNSPECIFIED", "FAIL", "APPEND", "REPLACE")


def _message_classes() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(
        name="kyma/flight_sql.proto", package=_PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        _add_fields(file.message_type.add(name=name), fields)
    _add_ingest(file)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in (*_MESSAGES, "CommandStatementIngest")
    }


_CLASSES = _message_classes()
CommandGetSqlInfo = _CLASSES["CommandGetSqlInfo"]
CommandGetCatalogs = _CLASSES["CommandGetCatalogs"]
CommandGetDbSchemas = _CLASSES["CommandGetDbSchemas"]
CommandGetTables = _CLASSES["CommandGetTables"]
CommandGetTableTypes = _CLASSES["CommandGetTableTypes"]
CommandGetPrimaryKeys = _CLASSES["CommandGetPrimaryKeys"]
ActionCreatePreparedStatementRequest = _CLASSES["ActionCreatePreparedStatementRequest"]
ActionCreatePreparedStatementResult = _CLASSES["ActionCreatePreparedStatementResult"]
ActionClosePreparedStatementRequest = _CLASSES["ActionClosePreparedStatementRequest"]
CommandStatementQuery = _CLASSES["CommandStatementQuery"]
TicketStatementQuery = _CLASSES["TicketStatementQuery"]
CommandPreparedStatementQuery = _CLASSES["CommandPreparedStatementQuery"]
CommandStatementUpdate = _CLASSES["CommandStatementUpdate"]
CommandPreparedStatementUpdate = _CLASSES["CommandPreparedStatementUpdate"]
DoPutUpdateResult = _CLASSES["DoPutUpdateResult"]
CommandStatementIngest = _CLASSES["CommandStatementIngest"]


class SqlInfo(IntEnum):
    """The ``SqlInfo`` codes kyma answers to ``CommandGetSqlInfo``, numbered as the spec does."""

    FLIGHT_SQL_SERVER_NAME = 0
    FLIGHT_SQL_SERVER_VERSION = 1
    FLIGHT_SQL_SERVER_ARROW_VERSION = 2
    FLIGHT_SQL_SERVER_READ_ONLY = 3
    FLIGHT_SQL_SERVER_SQL = 4
    FLIGHT_SQL_SERVER_SUBSTRAIT = 5
    FLIGHT_SQL_SERVER_TRANSACTION = 8
    FLIGHT_SQL_SERVER_CANCEL = 9
    SQL_DDL_CATALOG = 500
    SQL_DDL_SCHEMA = 501
    SQL_DDL_TABLE = 502
    SQL_IDENTIFIER_CASE = 503
    SQL_IDENTIFIER_QUOTE_CHAR = 504
    SQL_ALL_TABLES_ARE_SELECTABLE = 506
    SQL_NULL_ORDERING = 507
    SQL_SEARCH_STRING_ESCAPE = 513
    SQL_SUPPORTS_COLUMN_ALIASING = 515
    SQL_NULL_PLUS_NULL_IS_NULL = 516
    SQL_SUPPORTS_TABLE_CORRELATION_NAMES = 518
    SQL_SUPPORTS_EXPRESSIONS_IN_ORDER_BY = 520
    SQL_SUPPORTED_GRAMMAR = 525
    SQL_ANSI92_SUPPORTED_LEVEL = 526
    SQL_SCHEMA_TERM = 529
    SQL_CATALOG_TERM = 531
    SQL_CATALOG_AT_START = 532
    SQL_SUPPORTED_UNIONS = 540
    SQL_TRANSACTIONS_SUPPORTED = 563


# The enum values kyma's SqlInfo answers carry (SqlSupportedTransaction,
# SqlSupportedCaseSensitivity, SqlNullOrdering, SupportedSqlGrammar,
# SupportedAnsi92SqlGrammarLevel, SqlSupportedUnions).
SQL_SUPPORTED_TRANSACTION_NONE = 0
SQL_CASE_SENSITIVITY_LOWERCASE = 3
SQL_NULLS_SORTED_HIGH = 0
SQL_MINIMUM_GRAMMAR, SQL_CORE_GRAMMAR = 0, 1
ANSI92_ENTRY_SQL = 0
SQL_UNION, SQL_UNION_ALL = 0, 1
