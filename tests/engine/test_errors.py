"""Every error pickles (Spark ships them between processes) and answers, at every edge, the
status the one table gives its class."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path

import pytest

from kyma.connectors.base import SyncDisabled
from kyma.engine import errors as e
from kyma.engine.error_statuses import STATUSES, status

_ARGS: dict[type[e.KymaError], tuple[object, ...]] = {
    e.NotInstalledError: ("Kafka sources", "kafka"),
    e.IngestError: ("line 3: bad value", 3, "price"),
    e.LimitExceededError: ("too large", "KYMA_MAX_BODY_BYTES"),
    e.QueryTimeoutError: ("took too long", "KYMA_QUERY_TIMEOUT_SECONDS"),
    e.PermissionDeniedError: ("no", "write", "events"),
    e.TooManyQueriesError: ("busy", "KYMA_MAX_QUERIES", 3),
    SyncDisabled: ("pk_changed", "public.users"),
}
ERRORS = [c for _, c in inspect.getmembers(e, inspect.isclass) if issubclass(c, e.KymaError)] + [
    SyncDisabled
]


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_pickles(cls: type[e.KymaError]) -> None:
    error = cls(*_ARGS.get(cls, ("what went wrong",)))
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)


def test_not_installed_names_the_extra_after_a_round_trip() -> None:
    copy = pickle.loads(pickle.dumps(e.NotInstalledError("Kafka sources", "kafka")))
    assert str(copy) == "Kafka sources needs the 'kafka' extra: pip install 'kyma[kafka]'"
    assert isinstance(copy, ImportError) and copy.extra == "kafka"


def test_one_row_gives_every_edge_its_status() -> None:
    error = e.LimitExceededError("body too large", "KYMA_MAX_BODY_BYTES")
    answers = {edge: status(error, edge) for edge in ("http", "flight", "otlp", "sqlstate")}
    assert answers == {
        "http": 413,
        "flight": "INVALID_ARGUMENT",
        "otlp": "RESOURCE_EXHAUSTED",
        "sqlstate": "54000",
    }
    assert status(KeyError("x"), "http") == 500
    assert status(e.SqlError("x"), "otlp") == "FAILED_PRECONDITION"


def test_more_specific_rows_come_first() -> None:
    for i, (kind, _) in enumerate(STATUSES):
        for general, _ in STATUSES[:i]:
            assert not issubclass(kind, general), f"{kind.__name__} is shadowed by {general}"


def test_no_edge_restates_the_table() -> None:
    root = Path(__file__).resolve().parents[2]
    edges = ["kyma/server/errors.py", "kyma/flight/_errors.py", "kyma/pgwire/_errors.py"]
    for edge in [*edges, "ingest/otlp/_status.py"]:
        assert "LimitExceededError" not in (root / edge).read_text(), edge
