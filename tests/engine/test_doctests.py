"""The examples in docstrings (rewrite rules, types, paths) run as tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from kyma.engine.query import rewrite

MODULES = [
    "kyma.engine.types",
    "kyma.engine.float4",
    "kyma.engine.query.pg_float4",
    "kyma.engine.format.predicate",
    "kyma.engine.format._token_bloom",
    "kyma.engine.format._token_filter",
    "kyma.engine.native.strings",
    "kyma.engine.query.dialect",
    "kyma.engine.query.dialect.expressions",
    "kyma.engine.query.dialect._cursors",
    "kyma.engine.query._syntax",
    "kyma.engine.query._output_names",
    "kyma.engine.query._complexity",
    "kyma.engine.query._quarantine",
    # every rewrite rule, those in RULES and those the planner applies
    *(f"{rewrite.__name__}.{module.name}" for module in pkgutil.iter_modules(rewrite.__path__)),
    "kyma.ingest.evolution",
    "kyma.engine.native.lines",
    "kyma.engine.native.json_keys",
    "kyma.engine.error_statuses",
    "kyma.connectors.sync",
    "kyma.repl.render",
    "kyma.engine.query._datafusion",
    "kyma.engine.query.durations",
    "kyma.engine.deletes",
    "kyma.engine.query._copy_from",
    "kyma.pgwire._messages",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
