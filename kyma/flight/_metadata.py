"""The metadata commands BI tools call on connect, answered from kyma's catalog.

kyma's own tables sit in catalog ``kyma``, schema ``public``, type ``TABLE`` (a query names
them unqualified). Each connector is a catalog of its own with the source's schemas; its
tables are ``FOREIGN TABLE``s, queried as ``<connector>.<schema>.<table>``.

Every answer shows what the caller may read, as the HTTP listings do: a token limited to
some tables sees those, their schemas, and the connectors that hold one of them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from kyma import __version__
from kyma.auth import Principal
from kyma.engine.errors import KymaError
from kyma.engine.types import KymaType
from kyma.flight import _commands as cmd
from kyma.flight import _messages as msg
from kyma.flight._columns import client_schema
from kyma.services import Services

log = logging.getLogger("kyma.flight")

KYMA_CATALOG = "kyma"
KYMA_SCHEMA = "public"
TABLE_TYPES = ("TABLE", "FOREIGN TABLE")


@dataclass(frozen=True)
class _Table:
    catalog: str
    schema: str
    name: str
    type: str
    arrow_schema: pa.Schema


def catalogs(services: Services, caller: Principal) -> pa.Table:
    connectors = [c["name"] for c in services.connectors.list()]
    names = [KYMA_CATALOG, *sorted(n for n in connectors if caller.may_see_catalog(n))]
    return pa.table([pa.array(names, pa.utf8())], schema=cmd.CATALOGS)


def db_schemas(services: Services, command: Any, caller: Principal) -> pa.Table:
    catalog = command.catalog if command.HasField("catalog") else None
    pattern = _like(command.db_schema_filter_pattern, command.HasField("db_schema_filter_pattern"))
    pairs = sorted({(t.catalog, t.schema) for t in _tables(services, catalog, caller)})
    if catalog in (None, KYMA_CATALOG):  # the kyma schema exists with no table in it too
        pairs = sorted({(KYMA_CATALOG, KYMA_SCHEMA), *pairs})
    rows = [(c, s) for c, s in pairs if pattern(s)]
    return pa.Table.from_pylist(
        [{"catalog_name": c, "db_schema_name": s} for c, s in rows], schema=cmd.DB_SCHEMAS
    )


def tables(services: Services, command: Any, caller: Principal) -> pa.Table:
    catalog = command.catalog if command.HasField("catalog") else None
    schema_ok = _like(
        command.db_schema_filter_pattern, command.HasField("db_schema_filter_pattern")
    )
    name_ok = _like(
        command.table_name_filter_pattern, command.HasField("table_name_filter_pattern")
    )
    types = set(command.table_types)
    rows = [
        t
        for t in _tables(services, catalog, caller)
        if schema_ok(t.schema) and name_ok(t.name) and (not types or t.type in types)
    ]
    columns = {
        "catalog_name": [t.catalog for t in rows],
        "db_schema_name": [t.schema for t in rows],
        "table_name": [t.name for t in rows],
        "table_type": [t.type for t in rows],
    }
    if not command.include_schema:
        return pa.table(columns, schema=cmd.TABLES)
    columns["table_schema"] = [client_schema(t.arrow_schema).serialize().to_pybytes() for t in rows]
    return pa.table(columns, schema=cmd.TABLES_WITH_SCHEMA)


def table_types() -> pa.Table:
    return pa.table([pa.array(TABLE_TYPES, pa.utf8())], schema=cmd.TABLE_TYPES)


def primary_keys() -> pa.Table:
    """kyma tables have no primary keys; the answer is empty, with the spec's schema."""
    return cmd.PRIMARY_KEYS.empty_table()


def _tables(services: Services, catalog: str | None, caller: Principal) -> Iterator[_Table]:
    """The tables of one catalog (None: of all) that ``caller`` may read."""
    if catalog in (None, KYMA_CATALOG):
        for info in sorted(services.catalog.list_tables(), key=lambda t: t.name):
            if caller.may_touch(info.name):
                yield _Table(KYMA_CATALOG, KYMA_SCHEMA, info.name, "TABLE", info.schema)
    for connector in sorted(services.connectors.list(), key=lambda c: c["name"]):
        if catalog not in (None, connector["name"]) or not caller.may_see_catalog(
            connector["name"]
        ):
            continue
        try:
            found = services.connectors.tables(connector["name"])
        except KymaError as e:  # a disabled or unreachable source must not hide the others
            log.warning("connector %r left out of Flight SQL metadata: %s", connector["name"], e)
            continue
        for t in found:
            if not caller.may_touch(f"{connector['name']}.{t['schema']}.{t['name']}"):
                continue
            fields = [
                pa.field(c["name"], KymaType.parse(c["type"]).to_arrow()) for c in t["columns"]
            ]
            yield _Table(
                connector["name"], t["schema"], t["name"], "FOREIGN TABLE", pa.schema(fields)
            )


def _like(pattern: str, given: bool):  # type: ignore[no-untyped-def]
    """A predicate for a Flight SQL filter pattern: SQL LIKE with ``%``, ``_`` and ``\\``."""
    if not given:
        return lambda _name: True
    parts = re.findall(r"\\.|%|_|[^\\%_]+", pattern)
    regex = "".join(
        ".*" if p == "%" else "." if p == "_" else re.escape(p[1:] if p[0] == "\\" else p)
        for p in parts
    )
    compiled = re.compile(regex, re.DOTALL)
    return lambda name: compiled.fullmatch(name) is not None


# ---------------------------------------------------------------- GetSqlInfo

_INFO = msg.SqlInfo


def _sql_info_values() -> dict[int, str | bool | int | list[str]]:
    """A reasonable subset of SqlInfo: who the server is and the SQL it speaks."""
    return {
        _INFO.FLIGHT_SQL_SERVER_NAME: "kyma",
        _INFO.FLIGHT_SQL_SERVER_VERSION: __version__,
        _INFO.FLIGHT_SQL_SERVER_ARROW_VERSION: pa.__version__,
        _INFO.FLIGHT_SQL_SERVER_READ_ONLY: False,  # INSERT, DDL and bulk ingest write
        _INFO.FLIGHT_SQL_SERVER_SQL: True,
        _INFO.FLIGHT_SQL_SERVER_SUBSTRAIT: False,
        _INFO.FLIGHT_SQL_SERVER_TRANSACTION: msg.SQL_SUPPORTED_TRANSACTION_NONE,
        _INFO.FLIGHT_SQL_SERVER_CANCEL: False,
        _INFO.SQL_DDL_CATALOG: False,
        _INFO.SQL_DDL_SCHEMA: False,
        _INFO.SQL_DDL_TABLE: True,
        _INFO.SQL_IDENTIFIER_CASE: msg.SQL_CASE_SENSITIVITY_LOWERCASE,
        _INFO.SQL_IDENTIFIER_QUOTE_CHAR: '"',
        _INFO.SQL_ALL_TABLES_ARE_SELECTABLE: True,
        _INFO.SQL_NULL_ORDERING: msg.SQL_NULLS_SORTED_HIGH,
        _INFO.SQL_SEARCH_STRING_ESCAPE: "\\",
        _INFO.SQL_SUPPORTS_COLUMN_ALIASING: True,
        _INFO.SQL_NULL_PLUS_NULL_IS_NULL: True,
        _INFO.SQL_SUPPORTS_TABLE_CORRELATION_NAMES: True,
        _INFO.SQL_SUPPORTS_EXPRESSIONS_IN_ORDER_BY: True,
        _INFO.SQL_SUPPORTED_GRAMMAR: 1 << msg.SQL_MINIMUM_GRAMMAR | 1 << msg.SQL_CORE_GRAMMAR,
        _INFO.SQL_ANSI92_SUPPORTED_LEVEL: 1 << msg.ANSI92_ENTRY_SQL,
        _INFO.SQL_SCHEMA_TERM: "schema",
        _INFO.SQL_CATALOG_TERM: "catalog",
        _INFO.SQL_CATALOG_AT_START: True,
        _INFO.SQL_SUPPORTED_UNIONS: 1 << msg.SQL_UNION | 1 << msg.SQL_UNION_ALL,
        _INFO.SQL_TRANSACTIONS_SUPPORTED: False,
    }


# Which union member each value goes in; ints that are enums or bitmasks are int32.
_STRING, _BOOL, _INT32 = 0, 1, 3


def sql_info(command: Any) -> pa.Table:
    values = _sql_info_values()
    wanted = [i for i in command.info if i in values] if command.info else sorted(values)
    members: dict[int, list] = {code: [] for code in range(6)}
    type_ids, offsets = [], []
    for info in wanted:
        value = values[info]
        code = _BOOL if isinstance(value, bool) else _STRING if isinstance(value, str) else _INT32
        type_ids.append(code)
        offsets.append(len(members[code]))
        members[code].append(value)
    children = [
        pa.array(members[i], type=cmd.SQL_INFO.field("value").type.field(i).type) for i in range(6)
    ]
    value = pa.UnionArray.from_dense(
        pa.array(type_ids, pa.int8()),
        pa.array(offsets, pa.int32()),
        children,
        [f.name for f in cmd.SQL_INFO.field("value").type],
        list(range(6)),
    )
    return pa.table([pa.array(wanted, pa.uint32()), value], schema=cmd.SQL_INFO)
