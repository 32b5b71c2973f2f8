"""Applies numbered migrations once each, under an advisory lock.

Each owner of catalog state (the engine's catalog, and every store) keeps its DDL as
``NNN_name.sql`` files in its own folder. The versions form one sequence over all of them
(``kyma.schema_migrations`` is keyed by version), so a database opened with every owner's
migrations applies them in the order they were written, whichever owner holds them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import psycopg

from kyma.engine.errors import ConfigError

_LOCK_KEY = 0x6B796D61  # "kyma"
_NAME = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")


@dataclass(frozen=True)
class Migrations:
    """The ``NNN_name.sql`` files in ``folder`` of the import package ``package``."""

    package: str
    folder: str = "sql"

    def files(self) -> list[tuple[int, str, str]]:
        """(version, file name, SQL text) for every migration, in version order."""
        root = resources.files(self.package)
        if self.folder:
            root = root / self.folder
        found = []
        for entry in root.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match:
                found.append((int(match.group(1)), entry.name, entry.read_text()))
        return sorted(found)


def ordered(sets: Sequence[Migrations]) -> list[tuple[int, str, str]]:
    """Every migration of ``sets`` in version order; a version held twice is an error."""
    merged = sorted(m for s in dict.fromkeys(sets) for m in s.files())
    for (version, first, _), (again, second, _) in zip(merged, merged[1:], strict=False):
        if version == again:
            raise ConfigError(f"migrations {first!r} and {second!r} share version {version}")
    return merged


def migrate(conn: psycopg.Connection, sets: Sequence[Migrations]) -> list[str]:
    """Bring the catalog schema up to date; return the names of the migrations applied."""
    applied: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE SCHEMA IF NOT EXISTS kyma")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS kyma.schema_migrations ("
            " version int PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {v for (v,) in conn.execute("SELECT version FROM kyma.schema_migrations")}
        for version, name, sql in ordered(sets):
            if version in done:
                continue
            conn.execute(sql)
            conn.execute(
                "INSERT INTO kyma.schema_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
            applied.append(name)
    return applied
