"""The ``kyma serve`` the Postgres protocol tests share: its port, tokens and rows."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from serve_helpers import Serve

from kyma.auth import create_token
from kyma.stores import Stores

ROWS = [
    {
        "n": 1,
        "msg": "GET /",
        "ts": "2024-05-01T12:00:00.5Z",
        "attrs": {"http": {"method": "GET"}, "tags": ["a", "b"]},
        "emb": [0.5, 1.0, -2.0],
    },
    {"n": 2, "msg": "it's", "ts": "2024-05-01T12:00:01Z", "attrs": 42, "emb": [0.1, 0, 3]},
    {"n": 3, "msg": None, "ts": "2024-05-02T00:00:00Z", "attrs": None, "emb": None},
]

_JOINED = ", ".join(f"events t{i}" for i in range(19))
_MIXED = " + ".join(f"t{i}.n * {2 * i + 3}" for i in range(19))
LONG_QUERY = f"SELECT count(*) FROM {_JOINED} WHERE ({_MIXED}) % 1000 = 7"
"""Minutes of work over ``events`` (3^19 combinations), one row: what a client cancels."""


@dataclass
class PgServe:
    serve: Serve
    port: int
    tokens: dict[str, str]
    catalog_url: str

    def new_token(
        self, scopes: list[str], tables: list[str] | None = None, name: str | None = None
    ) -> str:
        """A new token, made in the server's catalog as ``kyma token create`` makes it (in
        this process: the CLI's own tests start it)."""
        stores = Stores.open(self.catalog_url)
        try:
            return create_token(stores.tokens, scopes, tables, name)[0]
        finally:
            stores.close()

    def dsn(self, token: str | None = None) -> str:
        password = f" password={token}" if token else ""
        return f"host=127.0.0.1 port={self.port} user=kyma dbname=kyma{password}"

    def connect(self, token: str = "admin", **kw) -> psycopg.Connection:  # type: ignore[no-untyped-def]
        return psycopg.connect(self.dsn(self.tokens[token]), connect_timeout=10, **kw)


def run_script(
    conn: psycopg.Connection, script: list[str], binary: bool = False
) -> list[tuple[str, object]]:
    """Each statement's rows (or status), or its error's SQLSTATE: for comparing a script's
    answers on kyma and on Postgres."""
    out: list[tuple[str, object]] = []
    for sql in script:
        try:
            cur = conn.cursor(binary=binary).execute(sql)
            out.append((sql, cur.fetchall() if cur.description else cur.statusmessage))
        except psycopg.Error as e:
            out.append((sql, e.sqlstate))
    return out
