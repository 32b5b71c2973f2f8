"""Applies the numbered migrations in ``sql/`` once each, under an advisory lock."""

from __future__ import annotations

import psycopg

from kyma.migrations import migrations

_LOCK_KEY = 0x6B796D61  # "kyma"


def migrate(conn: psycopg.Connection) -> list[str]:
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
        for version, name, sql in migrations():
            if version in done:
                continue
            conn.execute(sql)
            conn.execute(
                "INSERT INTO kyma.schema_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
            applied.append(name)
    return applied
