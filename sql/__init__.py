"""The catalog's DDL as numbered migrations: ``NNN_name.sql``, applied in order, once."""

from __future__ import annotations

import re
from importlib import resources

_NAME = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")


def migrations() -> list[tuple[int, str, str]]:
    """(version, file name, SQL text) for every migration, in version order."""
    found = []
    for entry in resources.files(__name__).iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text()))
    return sorted(found)
