"""The examples in docstrings (rewrite rules, types, paths) run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "kyma.engine.types",
    "kyma.engine.format.predicate",
    "kyma.engine.query.rewrite.dynamic_paths",
    "kyma.engine.query.rewrite.kyma_types",
    "kyma.ingest.evolution",
    "kyma.engine.error_statuses",
    "kyma.connectors.sync",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
