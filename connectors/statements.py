"""Connector statements in SQL: CREATE / DROP / REFRESH CONNECTOR and SHOW CONNECTORS.

``CREATE CONNECTOR pg_prod TYPE postgres WITH (url = 'postgres://app@db:5432/app',
secret_ref = '$env:PG_PASSWORD', pool_size = 4, include_schemas = 'public,billing')``
builds the same body ``POST /v1/connectors`` takes: connection options go under
``connection``, scope options under ``scope``, ``mode`` and ``sync_tables`` at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot.tokens import Token, Tokenizer, TokenType

from kyma.connectors.spec import Connection, Scope
from kyma.engine.errors import SqlError
from kyma.engine.query import QueryResult

if TYPE_CHECKING:
    from kyma.connectors.registry import ConnectorRegistry

_CONNECTION_KEYS = set(Connection.__dataclass_fields__)
_SCOPE_KEYS = set(Scope.__dataclass_fields__)
_LIST_KEYS = {"include_schemas", "exclude_tables", "sync_tables"}
_SHOW_COLUMNS = ("id", "name", "type", "mode", "state", "disabled_reason", "last_error")


def run(registry: ConnectorRegistry, sql: str) -> QueryResult | None:
    """Run ``sql`` if it is a connector statement; None otherwise."""
    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception:  # not for us; the query parser reports the syntax error
        return None
    words = [t.text.upper() for t in tokens[:3]]
    if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens = tokens[:-1]
    if words[:2] == ["SHOW", "CONNECTORS"] and len(tokens) == 2:
        return _show(registry)
    if len(words) < 2 or words[1] != "CONNECTOR":
        return None
    if words[0] == "CREATE":
        registry.create(_create_body(tokens[2:]))
        return QueryResult.status_only("CREATE CONNECTOR")
    if words[0] == "DROP":
        rest = tokens[2:]
        if_exists = [t.text.upper() for t in rest[:2]] == ["IF", "EXISTS"]
        name = _single_name(rest[2:] if if_exists else rest, "DROP CONNECTOR")
        if if_exists and name not in {c["name"] for c in registry.list()}:
            return QueryResult.status_only("DROP CONNECTOR")
        registry.drop(name)
        return QueryResult.status_only("DROP CONNECTOR")
    if words[0] == "REFRESH":
        registry.refresh(_single_name(tokens[2:], "REFRESH CONNECTOR"))
        return QueryResult.status_only("REFRESH CONNECTOR")
    return None


def _show(registry: ConnectorRegistry) -> QueryResult:
    rows = registry.list()
    columns = {c: [row.get(c) for row in rows] for c in _SHOW_COLUMNS}
    table = pa.table(
        {c: pa.array(v, pa.int64() if c == "id" else pa.string()) for c, v in columns.items()}
    )
    return QueryResult(table, "SHOW CONNECTORS")


def _single_name(tokens: list[Token], statement: str) -> str:
    if len(tokens) != 1 or tokens[0].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        raise SqlError(f"{statement} takes one connector name")
    return (
        tokens[0].text if tokens[0].token_type == TokenType.IDENTIFIER else tokens[0].text.lower()
    )


def _create_body(tokens: list[Token]) -> dict[str, Any]:
    """name TYPE type WITH (key = value, ...) → the connector's JSON body."""
    if len(tokens) < 3 or tokens[1].text.upper() != "TYPE":
        raise SqlError("expected CREATE CONNECTOR <name> TYPE <type> WITH (<option> = <value>, …)")
    body: dict[str, Any] = {
        "name": tokens[0].text.lower(),
        "type": tokens[2].text.lower(),
        "connection": {},
    }
    options = _options(tokens[3:])
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
            body["connection"][key] = value
        else:
            known = sorted(_CONNECTION_KEYS | _SCOPE_KEYS | {"mode", "sync_tables"})
            raise SqlError(f"unknown connector option {key!r}; expected one of {known}")
    return body


def _options(tokens: list[Token]) -> dict[str, Any]:
    if not tokens:
        return {}
    if tokens[0].token_type != TokenType.WITH or len(tokens) < 2 or tokens[1].text != "(":
        raise SqlError("expected WITH (<option> = <value>, …) after the connector type")
    if tokens[-1].text != ")":
        raise SqlError("the WITH option list is not closed with ')'")
    inner, options = tokens[2:-1], {}
    for start in range(0, len(inner), 4):
        group = inner[start : start + 4]
        if len(group) < 3 or group[1].token_type != TokenType.EQ:
            shown = " ".join(t.text for t in group)
            raise SqlError(f"expected <option> = <value> in WITH (…), got {shown!r}")
        if len(group) == 4 and group[3].token_type != TokenType.COMMA:
            raise SqlError(f"expected ',' between options, got {group[3].text!r}")
        options[group[0].text.lower()] = _value(group[2])
    return options


def _value(token: Token) -> Any:
    if token.token_type == TokenType.STRING:
        return token.text
    if token.token_type == TokenType.NUMBER:
        return float(token.text) if "." in token.text else int(token.text)
    if token.token_type in (TokenType.TRUE, TokenType.FALSE):
        return token.token_type == TokenType.TRUE
    raise SqlError(f"expected a string, number, true or false, got {token.text!r}")
