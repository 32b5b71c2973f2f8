"""The fields every source definition has (name, type, table), checked the same way."""

from __future__ import annotations

import re
from typing import Any

from kyma.engine.errors import ConfigError

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def no_unknown(raw: dict[str, Any], prefix: str, known: set[str]) -> None:
    """ConfigError naming the first field of ``raw`` that is not in ``known``."""
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{prefix}{unknown[0]}: unknown field; expected one of {sorted(known)}")


def source_header(body: Any, kind: str, known: set[str]) -> tuple[str, str]:
    """The (name, table) of a ``kind`` source body whose fields are ``known``."""
    if not isinstance(body, dict):
        raise ConfigError("body: expected a JSON object")
    no_unknown(body, "", known)
    name = body.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"name: {name!r} is not a source name (lower-case letter or _ first)")
    if body.get("type") != kind:
        raise ConfigError(f"type: expected {kind!r}, got {body.get('type')!r}")
    table = body.get("table")
    if not isinstance(table, str) or not table:
        raise ConfigError(f"table: expected a table name, got {table!r}")
    return name, table
