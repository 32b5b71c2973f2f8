"""A connector definition: the JSON body of ``POST /v1/connectors``, checked field by field.

Secrets never appear here: ``connection.secret_ref`` names where the password lives.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from kyma.connectors.types import CONNECTOR_TYPES
from kyma.engine.errors import ConfigError


class _Choice(StrEnum):
    """A field's choice: equal to its string, stored and shown as it, repr'd as it."""

    def __repr__(self) -> str:
        return repr(self.value)


class Mode(_Choice):
    """What a connector does with its source."""

    FEDERATION = "federation"  # queries read the source live
    SYNC = "sync"  # CDC keeps kyma tables; no live reads
    BOTH = "both"  # both of the above


class Tls(_Choice):
    REQUIRED = "required"
    VERIFY_FULL = "verify-full"
    DISABLED = "disabled"


TYPES = tuple(CONNECTOR_TYPES)
MODES = tuple(Mode)
TLS_MODES = tuple(Tls)
NUMERIC_MODES = ("real", "string")
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SECRET_REF = re.compile(r"\$env:[A-Za-z_][A-Za-z0-9_]*|file:.+")


@dataclass(frozen=True)
class Connection:
    url: str
    secret_ref: str | None = None
    tls: Tls = Tls.REQUIRED
    ca_file: str | None = None
    allow_insecure: bool = False
    pool_size: int = 4
    pool_timeout_seconds: float = 5.0
    connect_timeout_seconds: int = 5
    numeric_mode: str = "real"


@dataclass(frozen=True)
class Scope:
    include_schemas: tuple[str, ...] = ()
    exclude_tables: tuple[str, ...] = ()
    geometry_mode: str | None = None

    def admits(self, schema: str, table: str) -> bool:
        """Whether ``schema.table`` is in scope (no include list admits every user schema)."""
        if self.include_schemas and schema not in self.include_schemas:
            return False
        return f"{schema}.{table}" not in self.exclude_tables


@dataclass(frozen=True)
class ConnectorSpec:
    name: str
    type: str
    mode: Mode
    connection: Connection
    scope: Scope = field(default_factory=Scope)
    sync: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The definition as stored and shown: the body's shape, with defaults filled in."""
        return asdict(self)


def parse_spec(body: Any) -> ConnectorSpec:
    """A ConnectorSpec from a JSON body; ConfigError naming the field on any mistake."""
    body = _object(body, "body")
    _no_unknown(body, "", {"name", "type", "mode", "connection", "scope", "sync"})
    name = _str(body, "name", "")
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"name: {name!r} is not a connector name (lower-case letter or _, then letters,"
            " digits or _; at most 63)"
        )
    spec_type = _choice(body, "type", "", TYPES, None)
    mode = Mode(_choice(body, "mode", "", MODES, Mode.FEDERATION))
    return ConnectorSpec(
        name=name,
        type=spec_type,
        mode=mode,
        connection=_connection(_object(body.get("connection"), "connection")),
        scope=_scope(_object(body.get("scope", {}), "scope")),
        sync=_sync(_object(body.get("sync", {}), "sync"), mode),
    )


def check_new(spec: ConnectorSpec) -> None:
    """Rules a definition must meet when it is created or edited (ConfigError naming the
    field to change). Stored definitions from older versions are still read as they are."""
    if spec.connection.tls == Tls.DISABLED and not spec.connection.allow_insecure:
        raise ConfigError(
            "connection.allow_insecure: connection.tls is 'disabled'; add"
            ' "allow_insecure": true to connect without TLS (rows and the user name cross the'
            " network in clear text; a password is only ever sent by SCRAM)"
        )


def merge_patch(definition: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``definition`` edited by a JSON merge patch (RFC 7396): objects merge key by key,
    ``null`` removes a key (back to its default), anything else replaces.

    >>> merge_patch({"mode": "sync", "connection": {"url": "u", "pool_size": 2}},
    ...             {"connection": {"pool_size": None, "tls": "disabled"}})
    {'mode': 'sync', 'connection': {'url': 'u', 'tls': 'disabled'}}
    """
    merged = dict(definition)
    for key, value in _object(patch, "body").items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged


def check_change(old: ConnectorSpec, new: ConnectorSpec) -> None:
    """What an edit may not change: name, type and mode; while a connector syncs (CDC), its
    tables and source database, which its replication slot and publication belong to."""
    again = "; drop the connector and create it again"
    for field_name in ("name", "type"):
        if getattr(old, field_name) != getattr(new, field_name):
            raise ConfigError(f"{field_name}: a connector's {field_name} cannot change{again}")
    if old.mode != new.mode:
        raise ConfigError(f"mode: cannot change from {old.mode!r} to {new.mode!r}{again}")
    syncing = old.mode != Mode.FEDERATION
    if syncing and old.sync.get("tables") != new.sync.get("tables"):
        raise ConfigError(
            "sync.tables: cannot change while the connector syncs (its replication slot and"
            f" publication cover {old.sync.get('tables')!r}){again}"
        )
    if syncing and _database(old.connection.url) != _database(new.connection.url):
        raise ConfigError(
            "connection.url: a syncing connector cannot move to another server or database"
            f" (its replication slot is on the old one){again}"
        )


def _database(url: str) -> tuple[str | None, int | None, str]:
    parts = urlsplit(url)
    return parts.hostname, parts.port, parts.path


def _sync(raw: dict[str, Any], mode: Mode) -> dict[str, Any]:
    """``sync.tables`` (``schema.table`` each) is required by modes ``sync`` and ``both``."""
    _no_unknown(raw, "sync.", {"tables", "schedule_ms", "spark_min_bytes", "chunk_bytes"})
    tables = raw.get("tables", [])
    if not isinstance(tables, list) or not all(
        isinstance(t, str) and _NAME.fullmatch(t.split(".", 1)[0]) and t.count(".") == 1
        for t in tables
    ):
        raise ConfigError(f"sync.tables: expected a list of 'schema.table', got {tables!r}")
    if mode != Mode.FEDERATION and not tables:
        raise ConfigError(f"sync.tables: mode {mode!r} needs at least one 'schema.table'")
    schedule = raw.get("schedule_ms")
    if schedule is not None and (isinstance(schedule, bool) or not isinstance(schedule, int)):
        raise ConfigError(f"sync.schedule_ms: expected an integer or null, got {schedule!r}")
    sizes: dict[str, Any] = {}
    for key in ("spark_min_bytes", "chunk_bytes"):
        value = raw.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ConfigError(
                f"sync.{key}: expected a positive number of bytes or null, got {value!r}"
            )
        if key in raw:
            sizes[key] = value
    if mode == Mode.FEDERATION:
        return raw
    return {"tables": list(tables), "schedule_ms": schedule, **sizes}


def _connection(raw: dict[str, Any]) -> Connection:
    known = set(Connection.__dataclass_fields__)
    _no_unknown(raw, "connection.", known)
    url = _str(raw, "url", "connection.")
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql") or not parts.hostname:
        raise ConfigError(
            "connection.url: expected postgres://user@host:port/database, got a URL"
            f" with scheme {parts.scheme!r}"
        )
    if parts.password is not None:
        raise ConfigError(
            "connection.url: must not hold a password; put it in a secret and name it in"
            " connection.secret_ref ($env:KYMA_SECRET_<NAME> or file:<name in the secrets folder>)"
        )
    secret_ref = raw.get("secret_ref")
    if secret_ref is not None and (
        not isinstance(secret_ref, str) or not _SECRET_REF.fullmatch(secret_ref)
    ):
        raise ConfigError(
            "connection.secret_ref: expected '$env:KYMA_SECRET_<NAME>' or"
            " 'file:<name or path in the secrets folder>'"
        )
    pool_size = _int(raw, "pool_size", Connection.pool_size, 1, 64)
    return Connection(
        url=url,
        secret_ref=secret_ref,
        tls=Tls(_choice(raw, "tls", "connection.", TLS_MODES, Connection.tls)),
        ca_file=_optional_str(raw, "ca_file", "connection."),
        allow_insecure=_bool(raw, "allow_insecure", "connection.", False),
        pool_size=pool_size,
        pool_timeout_seconds=_number(raw, "pool_timeout_seconds", 5.0, 0, 300),
        connect_timeout_seconds=_int(raw, "connect_timeout_seconds", 5, 1, 300),
        numeric_mode=_choice(raw, "numeric_mode", "connection.", NUMERIC_MODES, "real"),
    )


def _scope(raw: dict[str, Any]) -> Scope:
    _no_unknown(raw, "scope.", set(Scope.__dataclass_fields__))
    excluded = _str_list(raw, "exclude_tables")
    for entry in excluded:
        if entry.count(".") != 1:
            raise ConfigError(f"scope.exclude_tables: expected 'schema.table', got {entry!r}")
    geometry = raw.get("geometry_mode")
    if geometry not in (None, "wkt"):
        raise ConfigError(f"scope.geometry_mode: expected 'wkt' or null, got {geometry!r}")
    return Scope(_str_list(raw, "include_schemas"), excluded, geometry)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _no_unknown(raw: dict[str, Any], prefix: str, known: set[str]) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{prefix}{unknown[0]}: unknown field; expected one of {sorted(known)}")


def _str(raw: dict[str, Any], key: str, prefix: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{prefix}{key}: expected a non-empty string, got {value!r}")
    return value


def _optional_str(raw: dict[str, Any], key: str, prefix: str) -> str | None:
    return None if raw.get(key) is None else _str(raw, key, prefix)


def _choice(
    raw: dict[str, Any], key: str, prefix: str, choices: tuple[str, ...], default: str | None
) -> str:
    value = raw.get(key, default)
    if value not in choices:
        raise ConfigError(f"{prefix}{key}: expected one of {list(choices)}, got {value!r}")
    return value  # type: ignore[return-value]


def _bool(raw: dict[str, Any], key: str, prefix: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{prefix}{key}: expected true or false, got {value!r}")
    return value


def _int(raw: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(
            f"connection.{key}: expected an integer from {low} to {high}, got {value!r}"
        )
    return value


def _number(raw: dict[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(
            f"connection.{key}: expected a number from {low} to {high}, got {value!r}"
        )
    return float(value)


def _str_list(raw: dict[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"scope.{key}: expected a list of non-empty strings, got {value!r}")
    return tuple(value)
