"""OTLP receivers for the tests: a real ``kyma serve`` shared by the end-to-end modules, and
an in-process receiver over the ``services`` fixture's fresh catalog, both on loopback."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Serve

from kyma.ingest.otlp import OtlpOptions, start_otlp_receiver


@pytest.fixture(scope="session")
def otlp_serve() -> Iterator[Serve]:
    """One ``kyma serve`` for every end-to-end OTLP test (each uses its own service name)."""
    home = Path(tempfile.mkdtemp(prefix="kyma-otlp-", dir="/tmp"))  # postgres reaches it
    serve = Serve(home, KYMA_OTLP_BATCH_LATENCY_MS="20")
    yield serve
    code = serve.stop()
    shutil.rmtree(home, ignore_errors=True)
    assert code == 0, "".join(serve.output)


@pytest.fixture
def receiver(services):  # type: ignore[no-untyped-def]
    """A started in-process receiver on free ports; group commits wait at most 20 ms."""
    options = OtlpOptions(grpc_port=0, http_port=0, batch_latency_ms=20)
    started = start_otlp_receiver(services.catalog, services.write_path, options)
    yield started
    started.stop()
