"""Connector statements in SQL: CREATE / ALTER / DROP / REFRESH CONNECTOR, SHOW CONNECTORS.

``CREATE CONNECTOR pg_prod TYPE postgres WITH (url = 'postgres://app@db:5432/app',
secret_ref = '$env:KYMA_SECRET_PG_PROD', pool_size = 4, include_schemas = 'public,billing')``
builds the same body ``POST /v1/connectors`` takes: connection options go under
``connection``, scope options under ``scope``, ``mode`` and ``sync_tables`` at the top.
``ALTER CONNECTOR pg_prod WITH (pool_size = 8)`` is ``PATCH /v1/connectors/pg_prod`` with
the body its options build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot.tokens import Token

from kyma.connectors.spec import Connection, Scope
from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult
from kyma.engine.query.options import name_token, tokenize, with_options

if TYPE_CHECKING:
    from kyma.connectors.registry import ConnectorRegistry

_CONNECTION_KEYS = set(Connection.__dataclass_fields__)
_SCOPE_KEYS = set(Scope.__dataclass_fields__)
_LIST_KEYS = {"include_schemas", "exclude_tables", "sync_tables"}
_SHOW_COLUMNS = ("id", "name", "type", "mode", "state", "disabled_reason", "last_error")


def run(registry: ConnectorRegistry, sql: str) -> QueryResult | None:
    """Run ``sql`` if it is a connector statement; None otherwise."""
    tokens = tokenize(sql)
    if tokens is None:
        return None
    words = [t.text.upper() for t in tokens[:3]]
    if words[:2] == ["SHOW", "CONNECTORS"] and len(tokens) == 2:
        return _show(registry)
    if len(words) < 2 or words[1] != "CONNECTOR":
        return None
    if words[0] == "CREATE":
        registry.create(_create_body(tokens[2:]))
        return QueryResult.status_only("CREATE CONNECTOR")
    if words[0] == "ALTER":
        if len(tokens) < 4:
            raise SqlError("expected ALTER CONNECTOR <name> WITH (<option> = <value>, …)")
        name = name_token(tokens[2:3], "ALTER CONNECTOR")
        registry.update(name, _options_body(with_options(tokens[3:], "the connector name")))
        return QueryResult.status_only("ALTER CONNECTOR")
    if words[0] == "DROP":
        rest = tokens[2:]
        if_exists = [t.text.upper() for t in rest[:2]] == ["IF", "EXISTS"]
        name = name_token(rest[2:] if if_exists else rest, "DROP CONNECTOR")
        if if_exists and name not in {c["name"] for c in registry.list()}:
            return QueryResult.status_only("DROP CONNECTOR")
        registry.drop(name)
        return QueryResult.status_only("DROP CONNECTOR")
    if words[0] == "REFRESH":
        registry.refresh(name_token(tokens[2:], "REFRESH CONNECTOR"))
        return QueryResult.status_only("REFRESH CONNECTOR")
    return None


def _show(registry: ConnectorRegistry) -> QueryResult:
    rows = registry.list()
    columns = {c: [row.get(c) for row in rows] for c in _SHOW_COLUMNS}
    table = pa.table(
        {c: pa.array(v, pa.int64() if c == "id" else pa.string()) for c, v in columns.items()}
    )
    return QueryResult(table, "SHOW CONNECTORS")


def _create_body(tokens: list[Token]) -> dict[str, Any]:
    """name TYPE type WITH (key = value, ...) → the connector's JSON body."""
    if len(tokens) < 3 or tokens[1].text.upper() != "TYPE":
        raise SqlError("expected CREATE CONNECTOR <name> TYPE <type> WITH (<option> = <value>, …)")
    body = _options_body(with_options(tokens[3:], "the connector type"))
    return {
        "name": tokens[0].text.lower(),
        "type": tokens[2].text.lower(),
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
