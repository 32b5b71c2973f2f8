"""The HTTP API: a Flask app factory with one blueprint per surface."""

from __future__ import annotations

from flask import Flask

from kyma import console
from kyma.auth import Authenticator
from kyma.console import tail
from kyma.server import (
    auth,
    connectors,
    errors,
    health,
    ingest,
    jobs,
    observability,
    queries,
    query,
    sources,
    tables,
    tokens,
)
from kyma.services import Services


def create_app(services: Services) -> Flask:
    app = Flask("kyma")
    app.extensions["kyma"] = services
    app.json.sort_keys = False  # type: ignore[attr-defined]
    errors.register(app)
    observability.register(app)  # before auth: a refused request has its request id too
    auth.register(app, Authenticator(services.stores.tokens, services.settings.auth))
    app.register_blueprint(health.blueprint)
    app.register_blueprint(observability.blueprint)
    app.register_blueprint(query.blueprint)
    app.register_blueprint(queries.blueprint)
    app.register_blueprint(ingest.blueprint)
    app.register_blueprint(tables.blueprint)
    app.register_blueprint(connectors.blueprint)
    app.register_blueprint(sources.blueprint)
    app.register_blueprint(jobs.blueprint)
    app.register_blueprint(tokens.blueprint)
    app.register_blueprint(tail.blueprint)
    app.register_blueprint(console.blueprint)
    return app
