"""Connector statements in SQL: CREATE / ALTER / DROP / REFRESH CONNECTOR, SHOW CONNECTORS.

``CREATE CONNECTOR pg_prod TYPE postgres WITH (url = 'postgres://app@db:5432/app',
secret_ref = '$env:KYMA_SECRET_PG_PROD', pool_size = 4, include_schemas = 'public,billing')``
builds the same body ``POST /v1/connectors`` takes: connection options go under
``connection``, scope options under ``scope``, ``mode`` and ``sync_tables`` at the top.
``ALTER CONNECTOR pg_prod WITH (pool_size = 8)`` is ``PATCH /v1/connectors/pg_prod`` with
the body its options build. kyma's SQL dialect parses them (``engine/query/dialect``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from kyma.connectors.spec import Connection, Scope
from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.query.dialect import KymaStatement, statement_options

if TYPE_CHECKING:
    from kyma.connectors.registry import ConnectorRegistry

_CONNECTION_KEYS = set(Connection.__dataclass_fields__)
_SCOPE_KEYS = set(Scope.__dataclass_fields__)
_LIST_KEYS = {"include_schemas", "exclude_tables", "sync_tables"}
_SHOW_COLUMNS = ("id", "name", "type", "mode", "state", "disabled_reason", "last_error")


def run(registry: ConnectorRegistry, stmt: exp.Expression) -> QueryResult | None:
    """Run ``stmt`` if it is a connector statement; None otherwise."""
    if not isinstance(stmt, KymaStatement) or stmt.noun not in ("CONNECTOR", "CONNECTORS"):
        return None
    verb, name = stmt.verb, stmt.name
    if verb == "SHOW":
        return _show(registry)
    if verb == "CREATE":
        registry.create(_create_body(stmt))
    elif verb == "ALTER":
        registry.update(name, _options_body(statement_options(stmt)))
    elif verb == "DROP":
        if stmt.args.get("exists") and name not in {c["name"] for c in registry.list()}:
            return QueryResult.status_only("DROP CONNECTOR")
        registry.drop(name)
    elif verb == "REFRESH":
        registry.refresh(name)
    else:
        return None
    return QueryResult.status_only(f"{verb} CONNECTOR")


def _show(registry: ConnectorRegistry) -> QueryResult:
    rows = registry.list()
    columns = {c: [row.get(c) for row in rows] for c in _SHOW_COLUMNS}
    table = pa.table(
        {c: pa.array(v, pa.int64() if c == "id" else pa.string()) for c, v in columns.items()}
    )
    return QueryResult(table, "SHOW CONNECTORS")


def _create_body(stmt: KymaStatement) -> dict[str, Any]:
    """name TYPE type WITH (key = value, ...) → the connector's JSON body."""
    body = _options_body(statement_options(stmt))
    return {
        "name": stmt.name,
        "type": stmt.type_name,
        **body,
        "connection": body.get("connection", {}),
    }


def _options_body(options: dict[str, Any]) -> dict[str, Any]:
    """``WITH`` options → a (partial) connector body."""
    body: dict[str, Any] = {}
    for key, value in options.items():
        if key in _LIST_KEYS:
            value = [v.strip() for v in str(value).split(",") if v.strip()]
        if key == "mode":
            body["mode"] = value
        elif key == "sync_tables":
            body.setdefault("sync", {})["tables"] = value
        elif key in _SCOPE_KEYS:
            body.setdefault("scope", {})[key] = value
        elif key in _CONNECTION_KEYS:
            body.setdefault("connection", {})[key] = value
        else:
            known = sorted(_CONNECTION_KEYS | _SCOPE_KEYS | {"mode", "sync_tables"})
            raise SqlError(f"unknown connector option {key!r}; expected one of {known}")
    return body
