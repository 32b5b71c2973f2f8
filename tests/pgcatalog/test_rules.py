"""pg_catalog's resolution and its client rules against stored expected output: each
statement in tests/fixtures/catalog_rules.sql parsed in kyma's dialect, its catalog
relations resolved (no kyma table of those names) and ``kyma.pgcatalog.rules`` applied."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
from sql_fixtures import cases

from kyma.engine.query import _relation_refs
from kyma.engine.query._parse import parse
from kyma.pgcatalog import CatalogRelations, rules

RELATIONS = CatalogRelations()


def _planned(sql: str) -> str:
    stmt = parse(sql)
    _relation_refs.resolve(_relation_refs.references(stmt, RELATIONS), RELATIONS, lambda _: False)
    return RELATIONS.rewrite(stmt).sql("postgres")


@pytest.mark.parametrize(("sql", "expected"), cases("catalog_rules.sql"))
def test_rule(sql: str, expected: str) -> None:
    assert _planned(sql) == expected


@pytest.mark.parametrize(
    "name",
    [
        "kyma.pgcatalog._empty",
        "engine.query.relations",
        *(f"{rules.__name__}.{m.name}" for m in pkgutil.iter_modules(rules.__path__)),
    ],
)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name.replace("engine.", "kyma.engine.", 1))
    result = doctest.testmod(module)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
