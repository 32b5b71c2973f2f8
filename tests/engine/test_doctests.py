"""The examples in docstrings (rewrite rules, types, paths) run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

from kyma.engine.query.rewrite import RULES

MODULES = [
    "kyma.engine.types",
    "kyma.engine.format.predicate",
    "kyma.engine.query.dialect",
    "kyma.engine.query.dialect.expressions",
    "kyma.engine.query._syntax",
    *(f"kyma.engine.query.rewrite.{rule.__module__.rsplit('.', 1)[1]}" for rule in RULES),
    "kyma.engine.query.rewrite.evolved",
    "kyma.engine.query.rewrite.current_state",
    "kyma.engine.query.rewrite.postgres_semantics",
    "kyma.ingest.evolution",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
