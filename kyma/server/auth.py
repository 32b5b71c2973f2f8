"""Who may call which endpoint: every request but the health checks and the console's page
and assets (which hold no data) carries a token.

The scope an endpoint needs is data (``SCOPES``); ``POST /v1/query`` needs what its
statement needs, which the query engine tells (``authorize`` in ``query.execute``).
Metadata follows the scopes of data: an endpoint about one table needs that table
(``TABLE_ARGS``), one about every table a token not limited to some (``EVERY_TABLE``),
and a listing shows what the caller may read (``FILTERED`` endpoints filter themselves).
"""

from __future__ import annotations

from flask import Flask, current_app, g, request

from kyma.auth import Authenticator, Principal

OPEN = frozenset({"health", "console"})
# blueprint → scope for every method; the rest: GET needs read, anything else admin.
SCOPES = {"ingest": "ingest", "tokens": "admin"}
# blueprint → the URL argument naming the table an endpoint works on (for table grants).
TABLE_ARGS = {"ingest": "table", "tables": "name", "tail": "name"}
# blueprints whose reads tell about every table (definitions, sources, jobs, counters) …
EVERY_TABLE = frozenset({"connectors", "sources", "jobs", "metrics"})
# … but for these endpoints, which answer only what the caller may read.
FILTERED = frozenset({"connectors.tables"})


def register(app: Flask, authenticator: Authenticator) -> None:
    app.extensions["kyma.auth"] = authenticator

    @app.before_request
    def authenticate() -> None:
        if request.blueprint in OPEN:
            return
        principal = authenticator.principal(request.headers.get("Authorization"))
        g.kyma_principal = principal
        if request.blueprint in ("query", "queries"):  # they check the caller themselves
            return
        scope = SCOPES.get(request.blueprint or "")
        if scope is None:
            scope = "read" if request.method in ("GET", "HEAD") else "admin"
        if request.blueprint in EVERY_TABLE and request.endpoint not in FILTERED:
            principal.require(scope, None)
            return
        arg = TABLE_ARGS.get(request.blueprint or "")
        table = (request.view_args or {}).get(arg) if arg else None
        principal.require(scope, [table] if table else [])


def principal() -> Principal:
    """The caller of the current request (set before every non-health request)."""
    return g.kyma_principal  # type: ignore[no-any-return]


def authenticator() -> Authenticator:
    return current_app.extensions["kyma.auth"]  # type: ignore[no-any-return]
