"""A Flight SQL server in this process, on a free loopback port, over the ``services``
fixture's fresh catalog; rows go in through the HTTP API's test client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kyma.flight import start_flight_server


@pytest.fixture
def flight_url(services) -> Iterator[str]:  # type: ignore[no-untyped-def]
    server = start_flight_server(services, "127.0.0.1", 0)
    yield server.url
    server.shutdown()


@pytest.fixture
def adbc(flight_url: str):  # type: ignore[no-untyped-def]
    import adbc_driver_flightsql.dbapi

    with adbc_driver_flightsql.dbapi.connect(flight_url, autocommit=True) as conn:
        yield conn
