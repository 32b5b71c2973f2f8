"""What the connector tests know about their source Postgres, and a way to ask it directly.

The fixtures that start the server live in ``conftest.py``; these names live here because a
test module cannot import from a ``conftest.py`` (every conftest is the module ``conftest``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg


@dataclass(frozen=True)
class SourcePostgres:
    """A second Postgres server, TLS on, that plays an operational database kyma federates."""

    admin_url: str  # the superuser, database ``kyma``
    log_file: Path  # the server log; ``log_statement = 'all'`` puts every statement in it
    ca_file: Path  # the server's self-signed certificate, for ``sslmode=verify-full``
    host: str
    port: int

    def url(self, database: str, user: str, password: str | None = None) -> str:
        """A libpq URL for ``user`` on ``database``; without a password unless one is given.

        >>> SourcePostgres("", Path(), Path(), "127.0.0.1", 5432).url("fed", "app", "p@ss")
        'postgresql://app:p%40ss@127.0.0.1:5432/fed'
        """
        secret = f":{quote(password, safe='')}" if password is not None else ""
        return f"postgresql://{quote(user, safe='')}{secret}@{self.host}:{self.port}/{database}"


@dataclass(frozen=True)
class SourceDatabase:
    """The seeded database ``fed`` (ICU ``en-US`` collation, time zone America/New_York)."""

    url: str  # as the ``app`` login role, without its password: postgresql://app@HOST:PORT/fed
    password: str  # the ``app`` role's password
    admin_url: str  # the superuser, database ``fed``


def run_in_postgres(url: str, sql: str, *, password: str | None = None) -> list[tuple]:
    """The rows of ``sql`` run directly in a fresh session on ``url``.

    The session keeps the database's defaults (time zone America/New_York for ``fed``); pass
    ``password`` when ``url`` has none (``SourceDatabase.url``).
    """
    with psycopg.connect(url, password=password, autocommit=True, connect_timeout=10) as conn:
        return conn.execute(sql).fetchall()
