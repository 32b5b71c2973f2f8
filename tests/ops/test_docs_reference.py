"""The reference pages name everything the code has: every HTTP route, every metric, every
error class with its status, every SQL function kyma registers. A new one without its line in
the docs fails here."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from kyma.engine import errors
from kyma.engine.error_statuses import status
from kyma.engine.query import _scan_setup
from kyma.metrics import Metrics

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
_CONVERTER = re.compile(r"<\w+:(\w+)>")  # Flask's <int:token_id> is <token_id> on the page
_BARE = r"<\1>"


def _page(name: str) -> str:
    return (REFERENCE / name).read_text()


def test_every_http_route_is_on_the_http_api_page(services) -> None:  # type: ignore[no-untyped-def]
    from kyma.ingest.otlp._http import create_http_app
    from kyma.ingest.otlp._signals import SIGNALS
    from kyma.server import create_app

    page = _page("http-api.md")
    routes = [
        f"`{method} {_CONVERTER.sub(_BARE, rule.rule)}`"
        for rule in create_app(services).url_map.iter_rules()
        if rule.endpoint != "static"
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"})
    ]
    assert len(routes) > 30
    otlp = [rule.rule for rule in create_http_app(None, 1).url_map.iter_rules()]  # type: ignore[arg-type]
    assert "/v1/<name>" in otlp
    routes += [f"`POST /v1/{signal}`" for signal in SIGNALS]
    missing = [route for route in routes if route not in page]
    assert not missing, f"routes missing from docs/reference/http-api.md: {missing}"


def test_every_metric_is_on_the_metrics_page() -> None:
    page = _page("metrics.md")
    names = {m.name for m in Metrics().registry.collect() if m.name.startswith("kyma_")}
    assert {"kyma_queries", "kyma_source_lag", "kyma_http_requests"} <= names
    missing = sorted(name for name in names if f"`{name}`" not in page)
    assert not missing, f"metrics missing from docs/reference/metrics.md: {missing}"


_ERRORS = [
    c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.KymaError)
]


@pytest.mark.parametrize("cls", _ERRORS, ids=lambda c: c.__name__)
def test_every_error_class_is_on_the_errors_page_with_its_statuses(cls: type) -> None:
    rows = [
        line for line in _page("errors.md").splitlines() if line.startswith(f"| `{cls.__name__}` |")
    ]
    assert rows, f"{cls.__name__} is missing from docs/reference/errors.md"
    error = cls.__new__(cls)
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[2] == f"`{errors.error_code(error)}`"
    assert cells[3] == str(status(error, "http"))
    assert cells[4] == f"`{status(error, 'sqlstate')}`"
    assert cells[5] == ("yes" if cls.retryable else "no")


def test_every_registered_function_is_on_the_functions_page(services, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The functions a statement's DataFusion session is given, as the planner builds it."""
    registered: list[str] = []
    build = _scan_setup.session_context

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        ctx = build(*args, **kwargs)
        for kind in ("register_udf", "register_udaf", "register_udwf"):
            original = getattr(ctx, kind)

            def record(function, original=original):  # type: ignore[no-untyped-def]
                registered.append(
                    function.name if hasattr(function, "name") else function._udf.name
                )
                return original(function)

            setattr(ctx, kind, record)
        return ctx

    monkeypatch.setattr(_scan_setup, "session_context", recording)
    services.query.planner._session()
    assert {"has_token", "cosine_distance", "kyma_numeric_div_text", "version"} <= set(registered)
    page = _page("functions.md")
    missing = sorted({name for name in registered if f"`{name}" not in page})
    assert not missing, f"functions missing from docs/reference/functions.md: {missing}"
