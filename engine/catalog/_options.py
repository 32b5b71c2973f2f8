"""Table options (``CREATE TABLE … WITH (...)``, ``ALTER TABLE … SET (...)``), checked here.

``schema_evolution``: ``string`` (the default: a new field becomes a string column) or
``typed`` (a new field gets its inferred type, by the peer's typed rules; see ingest/typed).
``cdc``: ``postgres`` marks a table CDC sync writes (see engine/query/rewrite/current_state.py).
``retention``: how long rows are kept, e.g. ``'30 days'`` (``ALTER TABLE t SET RETENTION
'30 days'``); see engine/retention.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kyma.engine.errors import SchemaError

OPTIONS: dict[str, tuple[str, ...]] = {
    "schema_evolution": ("string", "typed"),
    # A change log kept by CDC sync (system columns _kyma_pk, _kyma_op, _kyma_lsn): queried
    # by name it answers the current state; its change log (``<name>__changes``) every change.
    "cdc": ("postgres",),
}
DURATION_OPTIONS = ("retention",)  # values like '30 days'
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86_400, "week": 604_800}
_DURATION = re.compile(r"\s*(\d+)\s*(second|minute|hour|day|week)s?\s*", re.IGNORECASE)


def parse_duration(text: str) -> int:
    """Seconds in ``'30 days'``, ``'12 hours'``, ``'1 week'``; SchemaError otherwise."""
    match = _DURATION.fullmatch(text)
    if match is None or int(match.group(1)) == 0:
        raise SchemaError(
            f"duration {text!r}: expected a positive '<n> seconds|minutes|hours|days|weeks'"
        )
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` normalized (lower-case names and values); SchemaError naming a bad one.

    >>> check_options({"Schema_Evolution": "TYPED", "retention": "30 Days"})
    {'schema_evolution': 'typed', 'retention': '30 days'}
    """
    out: dict[str, Any] = {}
    known = sorted([*OPTIONS, *DURATION_OPTIONS])
    for key, value in options.items():
        name = str(key).lower()
        text = str(value).lower() if isinstance(value, str) else value
        if name in DURATION_OPTIONS:
            parse_duration(str(value))
            out[name] = " ".join(str(text).split())
            continue
        allowed = OPTIONS.get(name)
        if allowed is None:
            raise SchemaError(f"unknown table option {key!r}: expected one of {known}")
        if text not in allowed:
            raise SchemaError(f"table option {name}={value!r}: expected one of {list(allowed)}")
        out[name] = text
    return out


def retention_seconds(options: Mapping[str, Any]) -> int | None:
    """How long a table keeps rows, or None (forever)."""
    value = options.get("retention")
    return None if value is None else parse_duration(str(value))


def schema_evolution(options: Mapping[str, Any]) -> str:
    """A table's schema evolution mode."""
    return str(options.get("schema_evolution", "string"))
